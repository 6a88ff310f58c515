import { performance } from 'node:perf_hooks';
import { ApiClient, sleep, wallClock } from '../harness/client.js';
import { measureClosedLoop } from '../harness/measure.js';
import { cpuPer, cpuSnapshot, type ProcessGroups } from '../harness/stats.js';
import { fireBatch, type RunEndWatcher } from './load.js';
import type { RunStops } from './run-events.js';

/** The ways a client learns that its echo run ended. */
export type WaitFlow = 'wait' | 'poll' | 'light';

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

/** What a flow's measured runs gave, before the server-side times are read. */
interface FlowResult {
  samples: Sample[];
  clientMs: number[];
  runsPerSec: number;
  requests: number;
  failed: number;
  completed: number;
  cpuMsPerRun: { api: number; workers: number; redis: number };
}

/** Exactly the light load of `## Runs`: POST /api/runs, the end seen on the Redis event channel. */
async function lightFlow(ctx: WaitContext, clients: number, warmup: number, runs: number, wall: (perf: number) => number): Promise<FlowResult> {
  const samples: Sample[] = [];
  const batch = (n: number) =>
    fireBatch({
      apiUrl: ctx.apiUrl,
      runs: n,
      clients,
      closedLoop: true,
      watcher: ctx.watcher!,
      timeoutMs: Math.max(90_000, runs * 100),
      onAccepted: (runId, sentAt) => samples.push({ runId, sentWall: wall(sentAt), clientMs: NaN }),
    });
  await batch(warmup);
  samples.length = 0;
  const cpuBefore = cpuSnapshot(ctx.groups);
  const result = await batch(runs);
  const completed = result.runs - result.failed;
  const cpu = cpuPer(cpuBefore, cpuSnapshot(ctx.groups), completed);
  return {
    samples,
    clientMs: result.latenciesMs,
    runsPerSec: (completed / result.elapsedMs) * 1000,
    requests: runs,
    failed: result.failed + result.rejected,
    completed,
    cpuMsPerRun: { api: cpu.api, workers: cpu.workers, redis: cpu.redis },
  };
}

/** `wait` and `poll`: each client's run, its answer read by the client itself. */
async function clientFlow(flow: 'wait' | 'poll', ctx: WaitContext, clients: number, warmup: number, runs: number, wall: (perf: number) => number): Promise<FlowResult> {
  const api = new ApiClient(ctx.apiUrl, clients);
  const samples: Sample[] = [];
  try {
    const one = runner(flow, ctx, api, wall);
    const measured = await measureClosedLoop(
      { groups: ctx.groups },
      clients,
      warmup,
      runs,
      async (i) => {
        const sample = await one(i);
        if (typeof sample === 'string') return `${flow}: ${sample}`;
        samples.push(sample);
        return sample.clientMs;
      },
      {
        onMeasureStart: () => {
          samples.length = 0;
          api.resetCounts();
        },
      },
    );
    const { latencyMs: clientMs, runsPerSec, failed, runs: completed, cpuMsPerRun } = measured;
    return { samples, clientMs, runsPerSec, requests: api.total(), failed, completed, cpuMsPerRun };
  } finally {
    api.close();
  }
}

/** Client runs of `flow` in a closed loop of `clients`: `warmup` runs, then `runs` measured ones. */
export async function measureWaitFlow(ctx: WaitContext, flow: WaitFlow, clients: number, warmup: number, runs: number): Promise<WaitMeasurement> {
  const wall = wallClock();
  const result = flow === 'light' ? await lightFlow(ctx, clients, warmup, runs, wall) : await clientFlow(flow, ctx, clients, warmup, runs, wall);
  const { samples, completed } = result;
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
  return {
    flow,
    clients,
    runs: completed,
    failed: result.failed,
    runsPerSec: result.runsPerSec,
    clientMs: result.clientMs,
    serverMs: serverMs.sort((a, b) => a - b),
    createdToCompletedMs: createdToCompletedMs.sort((a, b) => a - b),
    missingEvents,
    requestsPerRun: result.requests / Math.max(1, completed),
    cpuMsPerRun: result.cpuMsPerRun,
  };
}
