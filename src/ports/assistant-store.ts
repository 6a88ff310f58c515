import { DEFAULT_ASSISTANT_LIMITS as DEFAULTS, type JsonObject } from '../domain/types.js';

/**
 * The assistants a tenant stored through the LangGraph Server API (`POST /assistants`), each
 * with its versions: every change is a new version, and one version is the latest (the
 * assistant as it reads). The graphs' default assistants are not stored (they are derived
 * from the registry). Bounded: at most `maxPerTenant` assistants per tenant, `maxVersions`
 * versions per assistant and `maxTenantBytes` of JSON per tenant (the UTF-8 bytes of each
 * assistant as it reads and of each of its versions); a write past any is AppError
 * `payload_too_large` and writes nothing (a change that does not grow the bytes is always allowed).
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

/** The bounds of assistant storage (SERVICE_ASSISTANTS_MAX, SERVICE_ASSISTANT_VERSIONS_MAX, SERVICE_ASSISTANTS_MAX_BYTES). */
export interface AssistantLimits {
  maxPerTenant: number;
  maxVersions: number;
  maxTenantBytes: number;
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
  /** The ids of every assistant of the tenant (at most `maxPerTenant`), in no particular order. */
  ids(tenant: string): Promise<string[]>;
  /** The assistants of these ids as they read, in the same order; null for an id with none. */
  getMany(tenant: string, assistantIds: readonly string[]): Promise<(AssistantRecord | null)[]>;
  /** How many assistants the tenant stores (of `graphId` only, when given), read from an index: no assistant is read. */
  count(tenant: string, graphId?: string): Promise<number>;
  /** The bytes the tenant's assistants take, as `maxTenantBytes` counts them. */
  usedBytes(tenant: string): Promise<number>;
  /**
   * Stores a new assistant and its version 1 (`assistant.version` is 1). Answers null when
   * stored, the existing assistant when the id is taken (nothing written). Throws AppError
   * `payload_too_large` when the tenant holds `maxPerTenant` already, or past `maxTenantBytes`.
   */
  create(tenant: string, assistant: AssistantRecord): Promise<AssistantRecord | null>;
  /**
   * Adds `latest` as the assistant's next version and makes it the latest, when the assistant
   * still has `versions` versions (`stale` otherwise: another change came first; read and
   * retry); `latest.version` is `versions + 1`. Throws `payload_too_large` when the assistant
   * has `maxVersions` versions, or past `maxTenantBytes`.
   */
  addVersion(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange>;
  /**
   * Makes `latest` (an existing version's fields) the assistant as it reads, when it still has
   * `versions` versions. Throws `payload_too_large` when a larger `latest` would pass `maxTenantBytes`.
   */
  setLatest(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange>;
  /** The assistant's versions, newest first; null when there is no such assistant. */
  versions(tenant: string, assistantId: string): Promise<AssistantVersionRecord[] | null>;
  /** Removes the assistant and its versions; false when there was none. */
  delete(tenant: string, assistantId: string): Promise<boolean>;
}
