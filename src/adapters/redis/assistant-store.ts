import {
  DEFAULT_ASSISTANT_LIMITS,
  type AssistantChange,
  type AssistantLimits,
  type AssistantRecord,
  type AssistantStore,
  type AssistantVersionRecord,
  type StoredAssistant,
} from '../../ports/assistant-store.js';
import { assistantsTooLarge, tooManyAssistants, tooManyAssistantVersions } from '../shared/assistant-limits.js';
import type { RedisClient } from './connection.js';
import { redisContext, type RedisContext } from './context.js';
import { mapFailures } from './errors.js';
import { SCRIPT_ARGS } from './script-args.js';

export interface RedisAssistantStoreOptions {
  /** Prefix of every key. @defaultValue agentplane */
  keyPrefix?: string;
  limits?: Partial<AssistantLimits>;
}

/** The replies of a MULTI's commands, or the first command's error. */
function replies(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new Error('The transaction was aborted.');
  return results.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}

/** Answers of changeAssistant-4.lua. */
const CHANGES: Record<number, AssistantChange | 'full' | 'bytes'> = { 0: 'ok', 1: 'missing', 2: 'stale', 3: 'full', 4: 'bytes' };

/**
 * Stored assistants on Redis under the tenant's hash tag: one hash of the tenant's assistants
 * as they read, one hash of versions per assistant, one of their graphs and a counter of their
 * bytes; the scripts check the caps, so they hold across replicas.
 */
class RedisAssistants implements AssistantStore {
  constructor(
    private readonly context: RedisContext,
    private readonly limits: AssistantLimits,
  ) {}

  private keys(tenant: string, assistantId: string): string[] {
    const k = this.context.keys.assistants(tenant);
    return [k.latest, k.versions(assistantId), k.graphs, k.bytes];
  }

  async get(tenant: string, assistantId: string): Promise<StoredAssistant | null> {
    const k = this.context.keys.assistants(tenant);
    const [json, versions] = replies(await this.context.redis.multi().hget(k.latest, assistantId).hlen(k.versions(assistantId)).exec()) as [string | null, number];
    return json === null ? null : { assistant: JSON.parse(json) as AssistantRecord, versions };
  }

  ids(tenant: string): Promise<string[]> {
    return this.context.redis.hkeys(this.context.keys.assistants(tenant).latest);
  }

  async getMany(tenant: string, assistantIds: readonly string[]): Promise<(AssistantRecord | null)[]> {
    if (assistantIds.length === 0) return [];
    const all = await this.context.redis.hmget(this.context.keys.assistants(tenant).latest, ...assistantIds);
    return all.map((json) => (json === null ? null : (JSON.parse(json) as AssistantRecord)));
  }

  async count(tenant: string, graphId?: string): Promise<number> {
    const k = this.context.keys.assistants(tenant);
    if (graphId === undefined) return this.context.redis.hlen(k.latest);
    // Graph ids only: the assistants are not read.
    return (await this.context.redis.hvals(k.graphs)).filter((graph) => graph === graphId).length;
  }

  async usedBytes(tenant: string): Promise<number> {
    return Number((await this.context.redis.get(this.context.keys.assistants(tenant).bytes)) ?? 0);
  }

  async create(tenant: string, assistant: AssistantRecord): Promise<AssistantRecord | null> {
    const { updated_at: _updated, ...version } = assistant;
    const args = SCRIPT_ARGS.createAssistant.encode({
      assistantId: assistant.assistant_id,
      assistant: JSON.stringify(assistant),
      version: JSON.stringify(version),
      maxPerTenant: this.limits.maxPerTenant,
      graphId: assistant.graph_id,
      maxTenantBytes: this.limits.maxTenantBytes,
    });
    const [code, existing] = await this.context.script<[number, string?]>('createAssistant', this.keys(tenant, assistant.assistant_id), args);
    if (code === 2) throw tooManyAssistants(this.limits.maxPerTenant);
    if (code === 3) throw assistantsTooLarge(this.limits.maxTenantBytes);
    return code === 1 ? (JSON.parse(existing!) as AssistantRecord) : null;
  }

  private async change(tenant: string, latest: AssistantRecord, version: string, versions: number): Promise<AssistantChange> {
    const args = SCRIPT_ARGS.changeAssistant.encode({
      assistantId: latest.assistant_id,
      assistant: JSON.stringify(latest),
      version,
      versions,
      maxVersions: this.limits.maxVersions,
      graphId: latest.graph_id,
      maxTenantBytes: this.limits.maxTenantBytes,
    });
    const [code] = await this.context.script<[number]>('changeAssistant', this.keys(tenant, latest.assistant_id), args);
    const change = CHANGES[code] ?? 'stale';
    if (change === 'full') throw tooManyAssistantVersions(this.limits.maxVersions);
    if (change === 'bytes') throw assistantsTooLarge(this.limits.maxTenantBytes);
    return change;
  }

  addVersion(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange> {
    const { updated_at, ...version } = latest;
    return this.change(tenant, latest, JSON.stringify({ ...version, created_at: updated_at }), versions);
  }

  setLatest(tenant: string, latest: AssistantRecord, versions: number): Promise<AssistantChange> {
    return this.change(tenant, latest, '', versions);
  }

  async versions(tenant: string, assistantId: string): Promise<AssistantVersionRecord[] | null> {
    const k = this.context.keys.assistants(tenant);
    const [exists, all] = replies(await this.context.redis.multi().hexists(k.latest, assistantId).hvals(k.versions(assistantId)).exec()) as [number, string[]];
    if (!exists) return null;
    return all.map((json) => JSON.parse(json) as AssistantVersionRecord).sort((a, b) => b.version - a.version);
  }

  async delete(tenant: string, assistantId: string): Promise<boolean> {
    const [removed] = await this.context.script<[number]>('deleteAssistant', this.keys(tenant, assistantId), [assistantId]);
    return removed === 1;
  }
}

/** The stored assistants on Redis; answers AppError `unavailable` while Redis is unreachable. */
export function redisAssistantStore(redis: RedisClient, options: RedisAssistantStoreOptions = {}): AssistantStore {
  const context = redisContext(redis, options.keyPrefix ?? 'agentplane');
  return mapFailures(new RedisAssistants(context, { ...DEFAULT_ASSISTANT_LIMITS, ...options.limits }));
}
