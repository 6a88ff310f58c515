import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { Api, type AuthHeaders } from './api.js';
import { ApiError } from './errors.js';
import type { ConsoleSettings } from './types.js';

/** Kept in sessionStorage only: gone with the tab, never in a URL, never in localStorage. */
const STORAGE_KEY = 'agentplane.console.credential';

export interface Credential {
  kind: 'apikey' | 'bearer';
  value: string;
}

/** Who the console acts as: the API with the credential, and whether the role may change things. */
export interface Caller {
  settings: ConsoleSettings;
  api: Api;
  /** False for a viewer when RBAC is on: writes are hidden or disabled (the server would answer 403). */
  canWrite: boolean;
  /** Whether the pending-approvals list is readable (user and above). */
  canListPending: boolean;
  signedIn: boolean;
  signOut(): void;
}

export const CallerContext = createContext<Caller | null>(null);

export function useCaller(): Caller {
  const caller = useContext(CallerContext);
  if (!caller) throw new Error('useCaller() outside the signed-in console');
  return caller;
}

export function storedCredential(): Credential | undefined {
  const raw = sessionStorage.getItem(STORAGE_KEY);
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as Credential;
    return (parsed.kind === 'apikey' || parsed.kind === 'bearer') && typeof parsed.value === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function storeCredential(credential: Credential | undefined): void {
  if (credential) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
  else sessionStorage.removeItem(STORAGE_KEY);
}

export function headersFor(settings: ConsoleSettings, credential: Credential | undefined): AuthHeaders {
  if (settings.auth === 'none' || !credential) return {};
  return credential.kind === 'apikey' ? { [settings.api_key_header]: credential.value } : { Authorization: `Bearer ${credential.value}` };
}

/**
 * Checks the credential and finds what its role may do, with reads only: GET /api/agents
 * (any role; 401 for a bad credential) and, with approvals on, GET /api/approval/pending
 * (user and above; 403 for a viewer under RBAC). With approvals off the role cannot be read,
 * so writes stay enabled and the server's 403 is shown if it refuses.
 */
export async function probeRole(settings: ConsoleSettings, api: Api): Promise<{ canWrite: boolean; canListPending: boolean }> {
  await api.agents();
  if (!settings.approvals) return { canWrite: true, canListPending: false };
  try {
    await api.pending(1);
    return { canWrite: true, canListPending: true };
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return { canWrite: false, canListPending: false };
    throw error;
  }
}
