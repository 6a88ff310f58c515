import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Command, MemorySaver } from '@langchain/langgraph';
import type { RedisClient } from '../../src/adapters/redis/connection.js';
import { graph as echoGraph } from '../../examples/langgraph/echo.js';
import { graph as reviewGraph } from '../../examples/langgraph/human-review.js';
import { ApiClient, closedLoop } from '../runs/client.js';
import { callsPerRun, commandCalls } from '../runs/stats.js';
import { cpuSnapshot, type ProcessGroups } from '../runs/wait.js';
import type { LangGraphBackend } from './options.js';
import type { Workload } from './workloads.js';
import { callOf, type AgentId } from './workloads.js';

/** The processes measured: where the API listens, whose CPU counts, and (Redis) the client that reads INFO. */
export interface Target {
  backend: LangGraphBackend;
  apiUrl: string;
  groups: ProcessGroups;
  /** Redis: the benchmark's own connection, for INFO commandstats. */
  admin?: RedisClient;
}

/** One batch of closed-loop runs. Times in ms, lists sorted ascending. */
export interface Measurement {
  /** Measured runs that answered as expected. */
  runs: number;
  /** Measured runs answered otherwise. */
  failed: number;
  /** Completed runs per second over first request → last answer. */
  runsPerSec: number;
  /** Request sent → its answer (read to its end). */
  latencyMs: number[];
  cpuMsPerRun: { api: number; workers: number; redis: number };
  /** Redis: commands per run (INFO commandstats, commands inside Lua included), most frequent first; empty when embedded. */
  commandsPerRun: [string, number][];
  /** 1-minute load average when the measured batch started. */
  loadAvg: number;
}

/** One agent with one client count in one round: runs through POST /api/runs/wait, or approval round trips (runs/s is then round trips/s). */
export interface Cell extends Measurement {
  backend: LangGraphBackend;
  agent: AgentId;
  clients: number;
  round: number;
}

/**
 * `warmup` then `runs` calls of `one` by `clients` closed-loop clients, with CPU and (Redis)
 * commands per run. `one(i)` answers its latency in ms, or why it failed.
 */
export async function measureLoop(target: Target, clients: number, warmup: number, runs: number, one: (i: number) => Promise<number | string>): Promise<Measurement> {
  const timeoutMs = Math.max(120_000, runs * 100);
  let latencyMs: number[] = [];
  let failed = 0;
  const loop = (n: number) =>
    closedLoop(clients, n, timeoutMs, async (i) => {
      const outcome = await one(i);
      if (typeof outcome === 'number') latencyMs.push(outcome);
      else if ((failed += 1) === 1) console.error(outcome);
    });
  await loop(warmup);
  latencyMs = [];
  failed = 0;
  const loadAvg = loadavg()[0]!;
  const cpuBefore = cpuSnapshot(target.groups);
  const callsBefore = target.admin ? await commandCalls(target.admin) : undefined;
  const elapsedMs = await loop(runs);
  const cpuAfter = cpuSnapshot(target.groups);
  const callsAfter = target.admin ? await commandCalls(target.admin) : undefined;
  const completed = latencyMs.length;
  const perRun = (k: keyof ProcessGroups) => (cpuAfter[k] - cpuBefore[k]) / completed;
  return {
    runs: completed,
    failed,
    runsPerSec: (completed / elapsedMs) * 1000,
    latencyMs: latencyMs.sort((a, b) => a - b),
    cpuMsPerRun: { api: perRun('api'), workers: perRun('workers'), redis: perRun('redis') },
    // The benchmark's own INFO calls are not the runs'.
    commandsPerRun: callsBefore && callsAfter ? callsPerRun(callsBefore, callsAfter, completed).filter(([name]) => name !== 'info') : [],
    loadAvg,
  };
}

/** `warmup` then `runs` calls of `agent`'s workload (an echo run, an approval round trip) by `clients` closed-loop clients. */
export async function measureCell(target: Target, agent: AgentId, clients: number, round: number, warmup: number, runs: number): Promise<Cell> {
  const api = new ApiClient(target.apiUrl, clients);
  const call = callOf(agent);
  try {
    const measured = await measureLoop(target, clients, warmup, runs, (i) => call(api, agent, i));
    return { backend: target.backend, agent, clients, round, ...measured };
  } finally {
    api.close();
  }
}

/** One batch of a workload's graph invoked in the benchmark's own process, LangGraph alone. */
export interface InProcessCell extends Measurement {
  workload: Workload;
  clients: number;
  round: number;
  /**
   * `engine`: the graph served by the embedded composition in this process, no HTTP
   * (engine-in-process.ts); `bare`: LangGraph alone behind a bare node:http server in its own
   * process (bare.ts); else LangGraph alone in this process.
   */
  kind?: 'engine' | 'bare';
}

/**
 * LangGraph's own cost of the same graph, for the ratios of issue 34: `warmup` then `runs`
 * calls on fresh threads with a `MemorySaver` (new per batch), by `clients` concurrent loops in
 * this process; CPU per call is this process's (nothing else runs in it meanwhile). `echo`: one
 * `graph.invoke({message})`; `approval`: the human-review graph invoked to its `interrupt()`,
 * then resumed with `Command({resume: {approved: true}})` to `outcome: "published"`.
 */
export async function measureInProcess(workload: Workload, clients: number, round: number, warmup: number, runs: number): Promise<InProcessCell> {
  // Either graph, invoked below with its own input (typed as the echo's).
  const graph = (workload === 'echo' ? echoGraph : (reviewGraph as unknown as typeof echoGraph)).withConfig({});
  graph.checkpointer = new MemorySaver();
  const self: Target = { backend: 'embedded', apiUrl: '', groups: { api: [process.pid], workers: [], redis: [] } };
  const measured = await measureLoop(self, clients, warmup, runs, async (i) => {
    const sent = performance.now();
    const config = { configurable: { thread_id: randomUUID() } };
    if (workload === 'echo') {
      const values = (await graph.invoke({ message: `run ${i}` }, config)) as { echoed?: unknown };
      return values.echoed === true ? performance.now() - sent : `in process: graph.invoke answered ${JSON.stringify(values).slice(0, 300)}`;
    }
    const paused = (await graph.invoke({ topic: `topic ${i}` } as never, config)) as { __interrupt__?: unknown[] };
    if (!Array.isArray(paused.__interrupt__)) return `in process: the review did not pause: ${JSON.stringify(paused).slice(0, 300)}`;
    const done = (await graph.invoke(new Command({ resume: { approved: true } }) as never, config)) as { outcome?: unknown };
    return done.outcome === 'published' ? performance.now() - sent : `in process: the resumed review answered ${JSON.stringify(done).slice(0, 300)}`;
  });
  return { workload, clients, round, ...measured };
}
