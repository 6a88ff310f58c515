import { nowIso } from '../../domain/time.js';
import type { JsonObject, Session } from '../../domain/types.js';
import type { NewSession } from '../../ports/store.js';
import type { RedisContext } from './context.js';
import type { DurableWrites } from './durable.js';
import { flatToObject, metadataPairs } from './hash.js';
import { METADATA_FIELD } from './scripts.js';

/**
 * The session hash itself, apart from its checkpoints: creating a session before its first
 * run and patching its metadata (one script each, answering the hash), and reading it back.
 */
export class RedisSessionRecords {
  constructor(
    private readonly c: RedisContext,
    private readonly clock: () => number,
    /** WAIT for replicas before a write is acknowledged (REDIS_WAIT_REPLICAS). */
    private readonly durable?: DurableWrites,
  ) {}

  async create(tenant: string, session: NewSession): Promise<Session> {
    const { keys } = this.c;
    const metadata = metadataPairs(session.metadata ?? {}, false);
    // The tenant joins the set expiry visits first (a global key, outside the script's slot).
    await this.c.redis.sadd(keys.tenants(), tenant);
    const sessionKey = keys.session(tenant, session.session_id);
    return this.write(tenant, session.session_id, sessionKey, () =>
      this.c.script('createSession', [sessionKey, keys.sessions(tenant), keys.sessionsByActivity(tenant)], this.args(session.session_id, metadata)),
    );
  }

  async updateMetadata(tenant: string, sessionId: string, patch: JsonObject): Promise<Session> {
    const { keys } = this.c;
    const pairs = metadataPairs(patch, true);
    const sessionKey = keys.session(tenant, sessionId);
    return this.write(tenant, sessionId, sessionKey, () =>
      this.c.script('updateSessionMetadata', [sessionKey, keys.sessionsByActivity(tenant), keys.sessions(tenant)], this.args(sessionId, pairs)),
    );
  }

  /** ARGV of both scripts: the session id, now (RFC 3339 and ms), the metadata pairs. */
  private args(sessionId: string, pairs: string[]): (string | number)[] {
    const now = this.clock();
    return [sessionId, nowIso(() => now), now, ...pairs];
  }

  private async write(tenant: string, sessionId: string, sessionKey: string, script: () => Promise<unknown[]>): Promise<Session> {
    const replicated = this.durable?.track();
    const reply = await script();
    await replicated?.([sessionKey]);
    return toSession(tenant, sessionId, flatToObject(reply[1] as unknown[]))!;
  }
}

/**
 * A session from its hash; null when it has none (no `agent_id`, which is '' for a session
 * created before its first run). Metadata fields are `METADATA_FIELD` + the key as JSON.
 */
export function toSession(tenant: string, id: string, hash: Record<string, string>): Session | null {
  if (hash.agent_id === undefined) return null;
  const metadata: JsonObject = {};
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith(METADATA_FIELD)) metadata[JSON.parse(field.slice(METADATA_FIELD.length)) as string] = JSON.parse(value) as unknown;
  }
  return {
    id,
    agent_id: hash.agent_id,
    tenant_id: tenant,
    created_at: hash.created_at ?? '',
    updated_at: hash.updated_at ?? hash.created_at ?? '',
    metadata,
  };
}
