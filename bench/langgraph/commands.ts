/**
 * `npx --no-install tsx bench/langgraph/commands.ts`: Redis commands per LangGraph checkpointer call. On a
 * private redis-server, a thread of checkpoints with 5 channels (one changing per step) and 2
 * writes per step, past the retention (50) so each put also prunes one; then counts, per call,
 * the round trips (EVALSHA and plain commands sent by the client) and the commands Redis runs
 * inside the scripts (INFO commandstats, which counts both).
 *
 * Options: --calls N (200).
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { Redis } from 'ioredis';
import { redisGraphCheckpointStore } from '../../src/adapters/redis/graph-checkpoints.js';
import { AgentplaneCheckpointSaver } from '../../src/langgraph/checkpoint-saver.js';
import { startRedisServer } from '../runs/processes.js';

const argv = process.argv.slice(2);
const CALLS = argv.includes('--calls') ? Number(argv[argv.indexOf('--calls') + 1]) : 200;
const CHANNELS = ['ch0', 'ch1', 'ch2', 'ch3', 'ch4'];

type Counts = Record<string, number>;

async function commandCounts(redis: Redis): Promise<Counts> {
  const counts: Counts = {};
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) counts[m[1]!] = Number(m[2]);
  return counts;
}

/** Commands per call between two snapshots, INFO itself left out. */
function perCall(before: Counts, after: Counts, calls: number): string {
  return Object.keys(after)
    .filter((name) => name !== 'info' && after[name]! > (before[name] ?? 0))
    .map((name) => `${name} ${Math.round(((after[name]! - (before[name] ?? 0)) / calls) * 100) / 100}`)
    .join(', ');
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const saver = new AgentplaneCheckpointSaver({ tenant: 'bench', storage: redisGraphCheckpointStore(redis, 'bench'), retain: 50 });
    let config: RunnableConfig = { configurable: { thread_id: 'thread' } };
    const put = async (step: number) => {
      const versions = Object.fromEntries(CHANNELS.map((c, i) => [c, i === 0 ? step + 1 : 1]));
      const values = Object.fromEntries(CHANNELS.map((c) => [c, `${c} at ${step}`]));
      const checkpoint = { ...emptyCheckpoint(), id: uuid6(step), channel_values: values, channel_versions: versions };
      config = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} }, step === 0 ? versions : { ch0: step + 1 });
    };
    const measure = async (label: string, calls: number, call: (i: number) => Promise<unknown>) => {
      const before = await commandCounts(redis);
      for (let i = 0; i < calls; i += 1) await call(i);
      console.log(`${label}: ${perCall(before, await commandCounts(redis), calls)}`);
    };
    for (let step = 0; step < 60; step += 1) {
      await put(step);
      await saver.putWrites(config, [['ch0', step], ['ch1', step]], `task${step}`);
    }
    await measure('put (5 channels, 1 new version, prunes 1)', CALLS, (i) => put(60 + i));
    await saver.putWrites(config, [['ch0', 0], ['ch1', 0]], 'task');
    await measure('putWrites (2 writes)', CALLS, (i) => saver.putWrites({ configurable: { ...config.configurable, checkpoint_id: uuid6(i) } }, [['ch0', i], ['ch1', i]], 'task'));
    await measure('getTuple, latest (5 channels, 2 writes)', CALLS, () => saver.getTuple({ configurable: { thread_id: 'thread' } }));
    await measure('getTuple, by id', CALLS, () => saver.getTuple(config));
    await measure('list, limit 10', 1, async () => {
      for await (const tuple of saver.list({ configurable: { thread_id: 'thread' } }, { limit: 10 })) void tuple;
    });
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

await main();
