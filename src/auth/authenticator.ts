import type { IncomingHttpHeaders } from 'node:http';
import { DEFAULT_TENANT, type Principal } from '../domain/types.js';
import type { AuthMode } from './options.js';

/** The principal of every request when authentication is off. */
export const ANONYMOUS_PRINCIPAL: Principal = Object.freeze({
  subject: 'anonymous',
  tenant: DEFAULT_TENANT,
  role: 'admin',
  kind: 'anonymous',
});

/** Resolves the caller of a request from its headers. */
export interface Authenticator {
  readonly mode: AuthMode;
  /**
   * The caller, or AppError `unauthorized` with a `WWW-Authenticate` header when the credential
   * is missing or invalid (and `unavailable` when the key set cannot be fetched).
   */
  authenticate(headers: IncomingHttpHeaders): Promise<Principal>;
}

export const anonymousAuthenticator: Authenticator = Object.freeze({
  mode: 'none' as const,
  authenticate: () => Promise.resolve(ANONYMOUS_PRINCIPAL),
});
