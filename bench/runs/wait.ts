import { performance } from 'node:perf_hooks';
import { ApiClient, closedLoop, sleep, wallClock } from './client.js';
import { fireBatch, type RunEndWatcher } from './load.js';
import type { RunStops } from './run-events.js';
import { cpuMs } from './stats.js';

/** The ways a client learns that its echo run ended. */
export type WaitFlow = 'wait' | 'poll' | 'light';

/** Process ids by role, for CPU per run. */
export interface ProcessGroups {
  api: number[];
  workers: number[];
  redis: number[];
}

/** One flow with one client count, over the measured runs. Times in ms, lists sorted ascending. */
export interface WaitMeasurement {
  flow: WaitFlow;
  clients: number;
  /** Measured runs that completed. */
  runs: number;
  /** Runs that did not complete, or requests not answered as expected. */
  failed: number;
  /** Completed runs per second over first request → last answer. */
  runsPerSec: number;
  /** Client-observed: request sent → the answer (or event) that says the run completed. */
  clientMs: number[];
  /** Server-side: request sent → `ts` of the run's `completed` event (+0.5 ms: `ts` is floored to the ms). */
  serverMs: number[];
  /** Server-side: the run's `created_at` → `ts` of its `completed` event (n/a for `light`: the ticket has no created_at). */
  createdToCompletedMs: number[];
  /** Measured runs whose end event never arrived (on the Redis channel, or GET /api/events/stream embedded). */
  missingEvents: number;
  /** HTTP requests per run (the `light` flow: its POST; the end arrives on Redis pub/sub). */
  requestsPerRun: number;
  /** CPU ms per run of each process group over the measured runs (NaN where there is none). */
  cpuMsPerRun: { api: number; workers: number; redis: number };
}

export interface WaitContext {
  apiUrl: string;
  events: RunStops;
  /** Redis mode: the bench's subscription to the event channel (the `## Runs` light load); absent when embedded. */
  watcher: RunEndWatcher | undefined;
  groups: ProcessGroups;
  pollMs: number;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
/** `wait_ms` of each POST /api/runs/wait: far above any echo run (a 202 is counted as a failure). */
const WAIT_MS = 30_000;

interface Sample {
  runId: string;
  sentWall: number;
  clientMs: number;
  createdAt?: number;
}

export function cpuSnapshot(groups: ProcessGroups): Record<keyof ProcessGroups, number> {
  const sum = (pids: number[]) => (pids.length === 0 ? NaN : pids.reduce((s, pid) => s + cpuMs(pid), 0));
  return { api: sum(groups.api), workers: sum(groups.workers), redis: sum(groups.redis) };
}

/** One echo run, client side, for each flow: resolves with the sample, or a reason it failed. */
function runner(flow: WaitFlow, ctx: WaitContext, api: ApiClient, wall: (perf: number) => number): (i: number) => Promise<Sample | string> {
  if (flow === 'wait') {
    return async (i) => {
      const sent = performance.now();
      const reply = await api.post<{ id: string; status: string; created_at: string }>('/api/runs/wait', { agent_id: 'echo', input: { n: i }, wait_ms: WAIT_MS });
      const clientMs = performance.now() - sent;
      if (reply.status !== 200 || reply.body?.status !== 'completed') return `POST /api/runs/wait answered ${reply.status}: ${reply.text.slice(0, 300)}`;
      return { runId: reply.body.id, sentWall: wall(sent), clientMs, createdAt: Date.parse(reply.body.created_at) };
    };
  }
  return async (i) => {
    const sent = performance.now();
    const ticket = await api.post<{ run_id: string }>('/api/runs', { agent_id: 'echo', input: { n: i } });
    if (ticket.status !== 202) return `POST /api/runs answered ${ticket.status}: ${ticket.text.slice(0, 300)}`;
    const runId = ticket.body.run_id;
    for (;;) {
      const run = await api.get<{ status: string; created_at: string }>(`/api/runs/${runId}`, 'GET /api/runs/{id}');
      if (run.status !== 200) return `GET /api/runs/{id} answered ${run.status}: ${run.text.slice(0, 300)}`;
      if (TERMINAL.has(run.body.status)) {
        const clientMs = performance.now() - sent;
        if (run.body.status !== 'completed') return `run ${runId} ended ${run.body.status}`;
        return { runId, sentWall: wall(sent), clientMs, createdAt: Date.parse(run.body.created_at) };
      }
      await sleep(ctx.pollMs);
    }
  };
}

/** Client runs of `flow` in a closed loop of `clients`: `warmup` runs, then `runs` measured ones. */
export async function measureWaitFlow(ctx: WaitContext, flow: WaitFlow, clients: number, warmup: number, runs: number): Promise<WaitMeasurement> {
  const wall = wallClock();
  const timeoutMs = Math.max(90_000, runs * 100);
  let samples: Sample[] = [];
  let failed = 0;
  let clientMs: number[];
  let elapsedMs: number;
  let requests: number;
  let completed: number;
  let cpuBefore = cpuSnapshot(ctx.groups);

  if (flow === 'light') {
    // Exactly the light load of `## Runs`: POST /api/runs, end seen on the Redis event channel.
    const watcher = ctx.watcher!;
    const batch = (n: number) =>
      fireBatch({
        apiUrl: ctx.apiUrl,
        runs: n,
        clients,
        closedLoop: true,
        watcher,
        timeoutMs,
        onAccepted: (runId, sentAt) => samples.push({ runId, sentWall: wall(sentAt), clientMs: NaN }),
      });
    await batch(warmup);
    samples = [];
    cpuBefore = cpuSnapshot(ctx.groups);
    const result = await batch(runs);
    clientMs = result.latenciesMs;
    elapsedMs = result.elapsedMs;
    requests = runs;
    failed = result.failed + result.rejected;
    completed = result.runs - result.failed;
  } else {
    const api = new ApiClient(ctx.apiUrl, clients);
    try {
      const one = runner(flow, ctx, api, wall);
      const loop = (n: number) =>
        closedLoop(clients, n, timeoutMs, async (i) => {
          const sample = await one(i);
          if (typeof sample === 'string') {
            if (failed === 0) console.error(`${flow}: ${sample}`);
            failed += 1;
          } else samples.push(sample);
        });
      await loop(warmup);
      samples = [];
      failed = 0;
      api.resetCounts();
      cpuBefore = cpuSnapshot(ctx.groups);
      elapsedMs = await loop(runs);
      requests = api.total();
      clientMs = samples.map((s) => s.clientMs).sort((a, b) => a - b);
      completed = samples.length;
    } finally {
      api.close();
    }
  }
  const cpuAfter = cpuSnapshot(ctx.groups);
  const missingEvents = await ctx.events.waitFor(
    samples.map((s) => s.runId),
    10_000,
  );
  const serverMs: number[] = [];
  const createdToCompletedMs: number[] = [];
  for (const s of samples) {
    const stop = ctx.events.stop(s.runId);
    if (!stop || stop.type !== 'completed') continue;
    serverMs.push(stop.tsMs + 0.5 - s.sentWall);
    if (s.createdAt !== undefined) createdToCompletedMs.push(stop.tsMs - s.createdAt);
  }
  const perRun = (k: keyof ProcessGroups) => (cpuAfter[k] - cpuBefore[k]) / completed;
  return {
    flow,
    clients,
    runs: completed,
    failed,
    runsPerSec: (completed / elapsedMs) * 1000,
    clientMs,
    serverMs: serverMs.sort((a, b) => a - b),
    createdToCompletedMs: createdToCompletedMs.sort((a, b) => a - b),
    missingEvents,
    requestsPerRun: requests / Math.max(1, completed),
    cpuMsPerRun: { api: perRun('api'), workers: perRun('workers'), redis: perRun('redis') },
  };
}
