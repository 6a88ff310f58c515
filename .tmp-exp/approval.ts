import { createAgentplane } from '../src/main/embed.js';
const app = await createAgentplane({ env: { ...process.env, SERVICE_LANGGRAPH_JSON: 'bench/langgraph/langgraph.json', LOG_LEVEL: 'silent' } });
const { composition } = app;
const T = 'DefaultTenant';
const waiting = new Map<string, (e: { type: string; approval_id?: string }) => void>();
composition.backend.events.subscribe(T, (stored: { event: { type: string; run_id: string; approval_id?: string } }) => {
  if (['completed', 'failed', 'interrupted'].includes(stored.event.type)) waiting.get(stored.event.run_id)?.(stored.event);
});
function until(runId: string) { return new Promise<{ type: string; approval_id?: string }>((r) => waiting.set(runId, r)); }
async function one(agent: string, i: number) {
  const ticket = await composition.runs.startRun(T, { agent_id: agent, input: { topic: `t${i}` } });
  const paused = await until(ticket.run_id);
  if (paused.type !== 'interrupted') throw new Error(`not paused: ${paused.type}`);
  const next = until(ticket.run_id);
  await composition.runs.answerApproval(T, paused.approval_id!, { approved: true, by: 'bench' } as never);
  const done = await next;
  if (done.type !== 'completed') throw new Error(`not completed: ${done.type}`);
  waiting.delete(ticket.run_id);
}
const RUNS = Number(process.env.RUNS ?? 1500);
async function measure(agent: string) {
  let next = 0;
  const go = async (n: number) => { await Promise.all(Array.from({ length: 8 }, async () => { while (next < n) await one(agent, next++); })); };
  await go(200); next = 0;
  const cpu0 = process.cpuUsage();
  await go(RUNS);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000 / RUNS;
}
const res: Record<string, number[]> = {};
for (let r = 0; r < Number(process.env.ROUNDS ?? 3); r += 1) for (const a of process.env.ONLY ? [process.env.ONLY] : r % 2 ? ['lg-human-review', 'human-review'] : ['human-review', 'lg-human-review']) (res[a] ??= []).push(await measure(a));
for (const [a, v] of Object.entries(res)) console.log(a, v.map((x) => x.toFixed(3)).join(' '));
await app.close();
