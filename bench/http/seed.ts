import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../src/adapters/redis/connection.js';
import { RedisStore } from '../../src/adapters/redis/store.js';

const TENANT = 'DefaultTenant';

/** The id of the i-th seeded session. */
export const sessionId = (i: number) => `bench-${String(i).padStart(6, '0')}`;

/**
 * Stores `count` echo sessions straight through the Store port (as a finished echo run leaves
 * them: a checkpoint at `receive`, then one at `__end__`), `concurrency` sessions in flight on
 * `redis` (the caller's, left open). Resolves with the elapsed milliseconds.
 */
export async function seedSessions(redis: RedisClient, keyPrefix: string, count: number, concurrency = 256): Promise<number> {
  const store = new RedisStore(redis, { keyPrefix });
  const started = Date.now();
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < count; i = next++) {
      const session_id = sessionId(i);
      await store.runs.createRun(TENANT, { run_id: randomUUID(), session_id, agent_id: 'echo', start: { node_id: 'receive', input: { message: `hello ${i}`, i } } });
      await store.sessions.appendCheckpoint(TENANT, session_id, { patch: { received_at: new Date().toISOString(), echoed: true }, node_id: '__end__' });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return Date.now() - started;
}
