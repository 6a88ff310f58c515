import { createAgentplane } from '../src/main/embed.js';
const app = await createAgentplane({ env: { ...process.env, SERVICE_LANGGRAPH_JSON: 'bench/langgraph/langgraph.json', LOG_LEVEL: 'silent' } });
const { composition } = app;
const T = 'DefaultTenant';
const waiting = new Map<string, () => void>();
composition.backend.events.subscribe(T, (stored: { event: { type: string; run_id: string } }) => {
  if (stored.event.type === 'completed' || stored.event.type === 'failed') waiting.get(stored.event.run_id)?.();
});
async function one(agent: string, i: number) {
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const ticket = await composition.runs.startRun(T, { agent_id: agent, input: { message: `m${i}` } });
  waiting.set(ticket.run_id, done);
  await finished;
  waiting.delete(ticket.run_id);
}
const RUNS = 3000;
async function measure(agent: string) {
  let next = 0;
  const go = async (n: number) => { await Promise.all(Array.from({ length: 32 }, async () => { while (next < n) await one(agent, next++); })); };
  await go(300); next = 0;
  const cpu0 = process.cpuUsage();
  await go(RUNS);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000 / RUNS;
}
const res: Record<string, number[]> = {};
for (let r = 0; r < Number(process.env.ROUNDS ?? 3); r += 1) for (const a of process.env.ONLY ? [process.env.ONLY] : r % 2 ? ['lg-echo', 'echo'] : ['echo', 'lg-echo']) (res[a] ??= []).push(await measure(a));
for (const [a, v] of Object.entries(res)) console.log(a, v.map((x) => x.toFixed(3)).join(' '));
await app.close();
