import { DEFAULT_ASSISTANT_LIMITS as DEFAULTS, type JsonObject } from '../domain/types.js';

/**
 * The assistants a tenant stored through the LangGraph Server API (`POST /assistants`), each
 * with its versions: every change is a new version, and one version is the latest (the
 * assistant as it reads). The graphs' default assistants are not stored (they are derived
 * from the registry). Bounded: at most `maxPerTenant` assistants per tenant and `maxVersions`
 * versions per assistant, a write past either is AppError `payload_too_large` and writes nothing.
 */

/** An assistant as stored: its latest version with the assistant's `created_at` and `updated_at`. */
export interface AssistantRecord {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: JsonObject;
  context: JsonObject;
  metadata: JsonObject;
  version: number;
  created_at: string;
  updated_at: string;
}

/** One version: the assistant's fields as that version set them, `created_at` the version's. */
export type AssistantVersionRecord = Omit<AssistantRecord, 'updated_at'>;

/** The bounds of assistant storage (SERVICE_ASSISTANTS_MAX, SERVICE_ASSISTANT_VERSIONS_MAX). */
export interface AssistantLimits {
  maxPerTenant: number;
  maxVersions: number;
}

export const DEFAULT_ASSISTANT_LIMITS: AssistantLimits = DEFAULTS;

/** What a change ({@link AssistantStore.addVersion}, {@link AssistantStore.setLatest}) found. */
export type AssistantChange = 'ok' | 'missing' | 'stale';

/** A stored assistant as read, with how many versions it has (what a change is conditioned on). */
export interface StoredAssistant {
  assistant: AssistantRecord;
  versions: number;
}

export interface AssistantStore {
  get(tenant: string, assistantId: string): Promise<StoredAssistant | null>;
  /** Every assistant of the tenant (at most `maxPerTenant`), in no particular order. */
  list(tenant: string): Promise<AssistantRecord[]>;
  /**
   * Stores a new assistant and its version 1 (`assistant.version` is 1). Answers null when
   * stored, the existing assistant when the id is taken (nothing written). Throws AppError
   * `payload_too_large` when the tenant holds `maxPerTenant` already.
   */
  create(tenant: string, assistant: AssistantRecord): Promise<AssistantRecord | null>;
  /**
   * Adds `latest` as the assistant's next version and makes it the latest, when the assistant
   * still has `versions` versions (`stale` otherwise: another change came first; read and
   * retry); `latest.version` is `versions + 1`. Throws `payload_too_large` when the assistant
   * has `maxVersions` versions.
   */
  addVersion(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange>;
  /** Makes `latest` (an existing version's fields) the assistant as it reads, when it still has `versions` versions. */
  setLatest(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange>;
  /** The assistant's versions, newest first; null when there is no such assistant. */
  versions(tenant: string, assistantId: string): Promise<AssistantVersionRecord[] | null>;
  /** Removes the assistant and its versions; false when there was none. */
  delete(tenant: string, assistantId: string): Promise<boolean>;
}
