/**
 * Closed-loop echo runs for bench/instructions/run.sh:
 * `node --import tsx client.ts <api url> <runs> <light|wait> <redis url>`. light: POST /api/runs,
 * the run's end seen as its `completed` event on the Redis events channel; wait: POST
 * /api/runs/wait. One client: every round trip of the run path shows.
 */
import { Redis } from 'ioredis';

const [api, count, mode, redisUrl] = process.argv.slice(2) as [string, string, 'light' | 'wait', string];
const body = JSON.stringify({ agent_id: 'echo', input: { message: 'hi' }, ...(mode === 'wait' ? { wait_ms: 30_000 } : {}) });
const ended = new Set<string>();
const waiting = new Map<string, () => void>();
const subscriber = mode === 'light' ? new Redis(redisUrl) : undefined;
if (subscriber) {
  await subscriber.subscribe('agentplane:events');
  subscriber.on('message', (_channel: string, message: string) => {
    const { event } = JSON.parse(message) as { event?: { type?: string; run_id?: string } };
    if (event?.type !== 'completed' || !event.run_id) return;
    const resolve = waiting.get(event.run_id);
    if (resolve) resolve();
    else ended.add(event.run_id);
  });
}
for (let i = 0; i < Number(count); i++) {
  const response = await fetch(`${api}/api/runs${mode === 'wait' ? '/wait' : ''}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const run = (await response.json()) as { run_id?: string; status?: string };
  if (mode === 'wait' ? run.status !== 'completed' : !run.run_id) throw new Error(`unexpected answer: ${JSON.stringify(run)}`);
  if (mode === 'wait' || ended.delete(run.run_id!)) continue;
  await new Promise<void>((resolve) => waiting.set(run.run_id!, resolve));
  waiting.delete(run.run_id!);
}
subscriber?.disconnect();
