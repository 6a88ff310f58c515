import { performance } from 'node:perf_hooks';
import { ApiClient } from '../harness/client.js';
import { measureClosedLoop } from '../harness/measure.js';
import type { InProcessCell } from './measure.js';
import type { Target } from './stack.js';
import type { Workload } from './workloads.js';

type Values = { echoed?: unknown; outcome?: unknown; thread_id?: string; __interrupt__?: unknown[] };

/**
 * LangGraph alone behind a bare `node:http` server (bench/langgraph/bare-server.ts, its own
 * process): `warmup` then `runs` echo runs (`POST /echo`) or approval round trips (`POST
 * /review` to the interrupt, then `POST /review/resume` to `outcome: "published"`) by `clients`
 * closed-loop clients in this process; CPU per run is the server process's. What any HTTP server
 * pays for the same graphs: LangGraph's own work, now interleaved with requests and sockets as
 * it is in every server, and the least HTTP can cost.
 */
export async function measureBare(target: Target, workload: Workload, clients: number, round: number, warmup: number, runs: number): Promise<InProcessCell> {
  const api = new ApiClient(target.apiUrl, clients);
  try {
    const measured = await measureClosedLoop(target, clients, warmup, runs, async (i) => {
      const sent = performance.now();
      if (workload === 'echo') {
        const reply = await api.post<Values>('/echo', { message: `run ${i}` });
        return reply.status === 200 && reply.body?.echoed === true ? performance.now() - sent : `bare server: POST /echo answered ${reply.status}: ${reply.text.slice(0, 300)}`;
      }
      const paused = await api.post<Values>('/review', { topic: `review ${i}` });
      if (paused.status !== 200 || !Array.isArray(paused.body?.__interrupt__)) return `bare server: POST /review answered ${paused.status}: ${paused.text.slice(0, 300)}`;
      const done = await api.post<Values>('/review/resume', { thread_id: paused.body.thread_id });
      return done.status === 200 && done.body?.outcome === 'published'
        ? performance.now() - sent
        : `bare server: POST /review/resume answered ${done.status}: ${done.text.slice(0, 300)}`;
    });
    return { workload, clients, round, ...measured, kind: 'bare' };
  } finally {
    api.close();
  }
}
