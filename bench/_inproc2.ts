import { randomUUID } from 'node:crypto';
import { MemorySaver } from '@langchain/langgraph';
import { graph as echoGraph } from '../examples/langgraph/echo.ts';
const graph = echoGraph.withConfig({});
graph.checkpointer = new MemorySaver();
const variants: Record<string, any> = {
  invoke: null,
  'values': { streamMode: ['values'] },
  'values+sync': { streamMode: ['values'], durability: 'sync' },
  'tasks': { streamMode: ['tasks'], durability: 'sync' },
  'checkpoints': { streamMode: ['checkpoints'], durability: 'sync' },
  'tasks+checkpoints+custom': { streamMode: ['tasks', 'checkpoints', 'custom'], durability: 'sync' },
  'ours (subgraphs)': { streamMode: ['tasks', 'checkpoints', 'custom'], durability: 'sync', subgraphs: true },
  'ours+signal': { streamMode: ['tasks', 'checkpoints', 'custom'], durability: 'sync', subgraphs: true, signal: 'x' },
};
for (const [name, opts] of Object.entries(variants)) {
  let i = 0;
  const one = async () => {
    const config: any = { configurable: { thread_id: randomUUID() } };
    if (!opts) return graph.invoke({ message: `run ${i}` }, config);
    const o = { ...config, ...opts };
    if (o.signal) o.signal = new AbortController().signal;
    for await (const _ of await graph.stream({ message: `run ${i}` }, o)) { /* read */ }
  };
  const loop = (n: number) => Promise.all(Array.from({ length: 8 }, async () => { while (i < n) { i++; await one(); } }));
  await loop(300); i = 0;
  const c0 = process.cpuUsage();
  await loop(2000);
  const c = process.cpuUsage(c0);
  console.log(`${name.padEnd(28)} CPU ms/run ${((c.user + c.system) / 1000 / 2000).toFixed(3)}`);
}
