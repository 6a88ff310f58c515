import { sortSpans } from '../../domain/spans.js';
import { newId, nowIso } from '../../domain/time.js';
import type { Checkpoint, Session, Span } from '../../domain/types.js';
import type { CheckpointWrite, Page, SessionListOptions, SessionStore } from '../../ports/store.js';
import type { RedisContext } from './context.js';
import { statePairs } from './hash.js';

/**
 * Sessions, checkpoints and spans on Redis: a session hash, the latest state as a hash of raw
 * JSON values, checkpoints and spans as lists; appending a checkpoint is one Lua script.
 */
export class RedisSessionStore implements SessionStore {
  constructor(private readonly c: RedisContext) {}

  async getSession(tenant: string, sessionId: string): Promise<Session | null> {
    const hash = await this.c.redis.hgetall(this.c.keys.session(tenant, sessionId));
    return toSession(tenant, sessionId, hash);
  }

  async listSessions(tenant: string, options: SessionListOptions): Promise<Session[]> {
    const { keys } = this.c;
    const index = options.agent_id ? keys.sessionsByAgent(tenant, options.agent_id) : keys.sessions(tenant);
    const reply = await this.c.script<string>(
      'listSessions',
      [index],
      [keys.session(tenant, ''), options.offset, options.offset + options.limit - 1, tenant],
    );
    return JSON.parse(String(reply)) as Session[];
  }

  async appendCheckpoint(tenant: string, sessionId: string, write: CheckpointWrite): Promise<Checkpoint> {
    const { keys } = this.c;
    const reply = await this.c.script(
      'appendCheckpoint',
      [keys.session(tenant, sessionId), keys.state(tenant, sessionId), keys.checkpoints(tenant, sessionId)],
      [
        sessionId,
        newId(),
        write.node_id ?? '',
        nowIso(),
        write.replace ? '1' : '0',
        write.ifSeq === undefined ? '' : String(write.ifSeq),
        write.rejectWhileRunning ? '1' : '0',
        ...statePairs(write.patch),
      ],
    );
    return JSON.parse(String(reply[1])) as Checkpoint;
  }

  async getCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null> {
    const doc = await this.c.redis.lindex(this.c.keys.checkpoints(tenant, sessionId), -1);
    return doc === null ? null : (JSON.parse(doc) as Checkpoint);
  }

  async listCheckpoints(tenant: string, sessionId: string, page: Page): Promise<Checkpoint[]> {
    const docs = await this.c.redis.lrange(this.c.keys.checkpoints(tenant, sessionId), -(page.offset + page.limit), -(page.offset + 1));
    return docs.reverse().map((doc) => JSON.parse(doc) as Checkpoint);
  }

  async addSpan(tenant: string, sessionId: string, span: Span): Promise<void> {
    await this.c.redis.rpush(this.c.keys.spans(tenant, sessionId), JSON.stringify(span));
  }

  async listSpans(tenant: string, sessionId: string): Promise<Span[]> {
    const docs = await this.c.redis.lrange(this.c.keys.spans(tenant, sessionId), 0, -1);
    return sortSpans(docs.map((doc) => JSON.parse(doc) as Span));
  }
}

function toSession(tenant: string, id: string, hash: Record<string, string>): Session | null {
  if (!hash.agent_id) return null;
  return {
    id,
    agent_id: hash.agent_id,
    tenant_id: tenant,
    created_at: hash.created_at ?? '',
    updated_at: hash.updated_at ?? hash.created_at ?? '',
  };
}
