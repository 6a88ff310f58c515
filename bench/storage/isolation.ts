import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import type { Store } from '../../src/ports/store.js';
import { sleep } from '../harness/client.js';

/** How long another tenant's read takes while one tenant patches a huge state. */
export interface IsolationFigures {
  /** Keys of the patched state. */
  stateKeys: number;
  /** Median read of the other tenant's run, idle, in milliseconds. */
  idleMs: number;
  /** The same during the patches. */
  busyMs: number;
  /** One-key patches that landed while the busy reads were taken. */
  patches: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * One tenant's session holds a state of `stateKeys` keys and takes one-key patches from four
 * concurrent loops; another tenant reads its run hash (what GET /api/runs/{id} reads) 500
 * times idle, then at least 200 times and across 20 patches. The reads are timed at Redis:
 * what a patch could hold up is Redis (before patches became O(patch), a one-key patch re-read
 * the whole state in one script and the other tenant's median read went from 3 ms to 177 ms).
 * This was an assertion of test/storage/bounded.test.ts; timings belong here.
 */
export async function measureIsolation(store: Store, admin: Redis, prefix: string, stateKeys = 60_000): Promise<IsolationFigures> {
  const big = 'bench-big';
  const other = 'bench-other';
  const session = `big-${randomUUID()}`;
  const chunk = (from: number) => Object.fromEntries(Array.from({ length: Math.min(10_000, stateKeys - from) }, (_, i) => [`k${from + i}`, from + i]));
  // The session and its first checkpoint come with a run, as through the API.
  await store.runs.createRun(big, { run_id: randomUUID(), session_id: session, agent_id: 'echo', start: { node_id: 'receive', input: chunk(0) } });
  for (let from = 10_000; from < stateKeys; from += 10_000) await store.sessions.appendCheckpoint(big, session, { patch: chunk(from) });
  const runId = randomUUID();
  await store.runs.createRun(other, { run_id: runId, session_id: `other-${runId}`, agent_id: 'echo', start: { node_id: 'receive', input: {} } });
  const key = new RedisKeys(prefix).run(other, runId);
  const readOnce = async () => {
    const started = performance.now();
    const run = await admin.hgetall(key);
    if (run.id !== runId) throw new Error(`the other tenant's run ${runId} is not at ${key}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 500; i += 1) await readOnce(); // warm-up: connection, JIT
  const idle: number[] = [];
  for (let i = 0; i < 500; i += 1) idle.push(await readOnce());

  let patches = 0;
  let patching = true;
  const loops = [0, 1, 2, 3].map(async (n) => {
    for (let i = 0; patching; i += 1) {
      await store.sessions.appendCheckpoint(big, session, { patch: { [`extra${n}`]: i } });
      patches += 1;
    }
  });
  const busy: number[] = [];
  try {
    while (patches < 4) await sleep(1);
    const from = patches;
    while (busy.length < 200 || patches < from + 20) busy.push(await readOnce());
  } finally {
    patching = false;
    await Promise.all(loops);
  }
  return { stateKeys, idleMs: median(idle), busyMs: median(busy), patches };
}
