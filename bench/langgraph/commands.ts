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
import { count, parseFlags } from '../harness/args.js';
import { runBench, type BenchProcesses } from '../harness/run.js';
import { commandCalls } from '../harness/stats.js';

const { flags } = parseFlags(process.argv.slice(2), { calls: count(200) }, 'npx --no-install tsx bench/langgraph/commands.ts [--calls N]');
const CALLS = flags.calls;
const CHANNELS = ['ch0', 'ch1', 'ch2', 'ch3', 'ch4'];

/** Commands per call between two snapshots (in INFO's order), INFO itself left out. */
function perCall(before: Map<string, number>, after: Map<string, number>, calls: number): string {
  return [...after]
    .filter(([name, n]) => name !== 'info' && n > (before.get(name) ?? 0))
    .map(([name, n]) => `${name} ${Math.round(((n - (before.get(name) ?? 0)) / calls) * 100) / 100}`)
    .join(', ');
}

async function main(processes: BenchProcesses): Promise<void> {
  const server = await processes.redisServer();
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
      const before = await commandCalls(redis);
      for (let i = 0; i < calls; i += 1) await call(i);
      console.log(`${label}: ${perCall(before, await commandCalls(redis), calls)}`);
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
  }
}

await runBench('bench/langgraph/commands.ts', 600, main);
