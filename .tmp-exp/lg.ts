import { MemorySaver } from '@langchain/langgraph';
import { graph as echo } from '../examples/langgraph/echo.js';
import { AgentplaneCheckpointSaver } from '../src/langgraph/checkpoint-saver.js';
import { MemoryGraphCheckpointStore } from '../src/adapters/memory/graph-checkpoints.js';
import { randomUUID } from 'node:crypto';
import { AgentplaneStore } from '../src/langgraph/item-store.js';
import { MemoryGraphItemStore } from '../src/adapters/memory/graph-items.js';

const RUNS = Number(process.env.RUNS ?? 3000), LOOPS = 32;
type Variant = (i: number) => Promise<void>;
function make(kind: string): Variant {
  const g = echo.withConfig({}) as typeof echo;
  const storage = new MemoryGraphCheckpointStore();
  g.checkpointer = kind.includes('ours') ? new AgentplaneCheckpointSaver({ tenant: 't', storage, runMetadata: true }) : new MemorySaver();
  if (kind.includes('store')) g.store = new AgentplaneStore({ tenant: 't', storage: new MemoryGraphItemStore() });
  if (kind === 'invoke') return async (i) => { await g.invoke({ message: `m${i}` }, { configurable: { thread_id: randomUUID() } }); };
  return async (i) => {
    const halt = new AbortController();
    const configurable = kind.includes('bigcfg')
      ? { 'user-agent': 'node', 'x-request-id': randomUUID(), graph_id: 'lg-echo', assistant_id: randomUUID(), thread_id: randomUUID(), run_id: randomUUID() }
      : { thread_id: randomUUID() };
    const opts = kind.includes('modes')
      ? { configurable, signal: halt.signal, recursionLimit: 25, durability: 'sync' as const, streamMode: ['tasks', 'checkpoints', 'custom'] as const, subgraphs: true }
      : { configurable, streamMode: ['values'] as const };
    for await (const _ of await g.stream({ message: `m${i}` }, opts as never)) void _;
  };
}
async function measure(kind: string) {
  const run = make(kind);
  let next = 0;
  const go = async (n: number) => { await Promise.all(Array.from({ length: LOOPS }, async () => { while (next < n) await run(next++); })); };
  await go(300); next = 0;
  const cpu0 = process.cpuUsage(); const t0 = performance.now();
  await go(RUNS);
  const cpu = process.cpuUsage(cpu0); const ms = performance.now() - t0;
  return ((cpu.user + cpu.system) / 1000 / RUNS);
}
const kinds = (process.env.KINDS ?? 'invoke,values,modes,modes-bigcfg,modes-bigcfg-ours').split(',');
const results: Record<string, number[]> = {};
for (let round = 0; round < 3; round += 1) for (const k of (round % 2 ? [...kinds].reverse() : kinds)) (results[k] ??= []).push(await measure(k));
for (const k of kinds) console.log(k.padEnd(20), results[k]!.map((v) => v.toFixed(3)).join(' '), 'median', [...results[k]!].sort()[1]!.toFixed(3));
