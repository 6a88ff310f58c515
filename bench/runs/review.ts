import { performance } from 'node:perf_hooks';
import { ApiClient, sleep, type ScopedClient } from '../harness/client.js';
import { measureClosedLoop } from '../harness/measure.js';
import type { ProcessGroups } from '../harness/stats.js';

/** `wait`: POST /api/runs/wait, then POST /api/approval/respond with wait_ms. `poll`: the flow without them. */
export type ReviewFlow = 'wait' | 'poll';

/** One flow with one client count, over the measured round trips. Times in ms, sorted ascending. */
export interface ReviewMeasurement {
  flow: ReviewFlow;
  clients: number;
  /** Round trips that ended with the run `completed`. */
  roundTrips: number;
  /** Round trips that went wrong (unexpected status or answer). */
  failed: number;
  roundTripsPerSec: number;
  /** First request of a round trip sent → the answer that says the run completed. */
  latencyMs: number[];
  /** HTTP requests actually made per round trip, by route. */
  requestsByRoute: [string, number][];
  requestsPerRoundTrip: number;
  /** Fewest and most requests one round trip made. */
  minRequests: number;
  maxRequests: number;
  cpuMsPerRoundTrip: { api: number; workers: number; redis: number };
}

export interface ReviewContext {
  apiUrl: string;
  groups: ProcessGroups;
  pollMs: number;
}

const WAIT_MS = 30_000;
const ENDED = new Set(['completed', 'failed', 'cancelled']);

type Run = { id: string; status: string; approval?: { id: string } };

/** Polls GET /api/runs/{id} every `pollMs` until the run is `want` (or ended otherwise). */
async function pollUntil(api: ScopedClient, runId: string, want: string, pollMs: number): Promise<string | undefined> {
  for (;;) {
    const run = await api.get<Run>(`/api/runs/${runId}`, 'GET /api/runs/{id}');
    if (run.status !== 200) return `GET /api/runs/{id} answered ${run.status}: ${run.text.slice(0, 300)}`;
    if (run.body.status === want) return undefined;
    if (ENDED.has(run.body.status)) return `run ${runId} is ${run.body.status}, expected ${want}`;
    await sleep(pollMs);
  }
}

/** One round trip of `flow`: undefined when the run completed after its approval, else what went wrong. */
function roundTrip(flow: ReviewFlow, pollMs: number): (api: ScopedClient, i: number) => Promise<string | undefined> {
  if (flow === 'wait') {
    return async (api, i) => {
      const asked = await api.post<Run>('/api/runs/wait', { agent_id: 'human-review', input: { topic: `review ${i}` }, wait_ms: WAIT_MS });
      if (asked.status !== 200 || asked.body?.status !== 'interrupted' || !asked.body.approval) {
        return `POST /api/runs/wait answered ${asked.status}: ${asked.text.slice(0, 300)}`;
      }
      const done = await api.post<{ run?: Run }>('/api/approval/respond', { id: asked.body.approval.id, approved: true, wait_ms: WAIT_MS });
      if (done.status !== 200 || done.body?.run?.status !== 'completed') return `POST /api/approval/respond answered ${done.status}: ${done.text.slice(0, 300)}`;
      return undefined;
    };
  }
  return async (api, i) => {
    const ticket = await api.post<{ run_id: string }>('/api/runs', { agent_id: 'human-review', input: { topic: `review ${i}` } });
    if (ticket.status !== 202) return `POST /api/runs answered ${ticket.status}: ${ticket.text.slice(0, 300)}`;
    const runId = ticket.body.run_id;
    const paused = await pollUntil(api, runId, 'interrupted', pollMs);
    if (paused) return paused;
    // The inbox: find this run's request among the pending ones (other clients' runs wait there too).
    let approvalId: string | undefined;
    for (let tries = 0; approvalId === undefined; tries += 1) {
      const pending = await api.get<{ pending: { id: string; run_id: string }[] }>('/api/approval/pending', 'GET /api/approval/pending');
      if (pending.status !== 200) return `GET /api/approval/pending answered ${pending.status}: ${pending.text.slice(0, 300)}`;
      approvalId = pending.body.pending.find((p) => p.run_id === runId)?.id;
      if (approvalId === undefined) {
        if (tries >= 100) return `run ${runId}: no pending approval after ${tries + 1} listings`;
        await sleep(pollMs);
      }
    }
    const answer = await api.post<{ status: string }>('/api/approval/respond', { id: approvalId, approved: true });
    if (answer.status !== 200) return `POST /api/approval/respond answered ${answer.status}: ${answer.text.slice(0, 300)}`;
    return pollUntil(api, runId, 'completed', pollMs);
  };
}

/** Round trips of `flow` in a closed loop of `clients`: `warmup` ones, then `runs` measured ones. */
export async function measureReviewFlow(ctx: ReviewContext, flow: ReviewFlow, clients: number, warmup: number, runs: number): Promise<ReviewMeasurement> {
  const api = new ApiClient(ctx.apiUrl, clients);
  const one = roundTrip(flow, ctx.pollMs);
  let minRequests = Infinity;
  let maxRequests = 0;
  try {
    const measured = await measureClosedLoop(
      { groups: ctx.groups },
      clients,
      warmup,
      runs,
      async (i) => {
        const scoped = api.scoped();
        const sent = performance.now();
        const problem = await one(scoped, i);
        minRequests = Math.min(minRequests, scoped.requests);
        maxRequests = Math.max(maxRequests, scoped.requests);
        return problem ? `review ${flow}: ${problem}` : performance.now() - sent;
      },
      {
        onMeasureStart: () => {
          minRequests = Infinity;
          maxRequests = 0;
          api.resetCounts();
        },
      },
    );
    return {
      flow,
      clients,
      roundTrips: measured.runs,
      failed: measured.failed,
      roundTripsPerSec: measured.runsPerSec,
      latencyMs: measured.latencyMs,
      requestsByRoute: [...api.counts].map(([route, n]): [string, number] => [route, n / Math.max(1, runs)]),
      requestsPerRoundTrip: api.total() / Math.max(1, runs),
      minRequests,
      maxRequests,
      cpuMsPerRoundTrip: measured.cpuMsPerRun,
    };
  } finally {
    api.close();
  }
}
