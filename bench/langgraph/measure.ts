import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Command, MemorySaver } from '@langchain/langgraph';
import { graph as echoGraph } from '../../examples/langgraph/echo.js';
import { graph as reviewGraph } from '../../examples/langgraph/human-review.js';
import { ApiClient } from '../harness/client.js';
import { measureClosedLoop, type Measurement } from '../harness/measure.js';
import type { LangGraphBackend, Target } from './stack.js';
import type { Workload } from './workloads.js';
import { callOf, type AgentId } from './workloads.js';

/** One agent with one client count in one round: runs through POST /api/runs/wait, or approval round trips (runs/s is then round trips/s). */
export interface Cell extends Measurement {
  backend: LangGraphBackend;
  agent: AgentId;
  clients: number;
  round: number;
}

/** `warmup` then `runs` calls of `agent`'s workload (an echo run, an approval round trip) by `clients` closed-loop clients. */
export async function measureCell(target: Target, agent: AgentId, clients: number, round: number, warmup: number, runs: number): Promise<Cell> {
  const api = new ApiClient(target.apiUrl, clients);
  const call = callOf(agent);
  try {
    const measured = await measureClosedLoop(target, clients, warmup, runs, (i) => call(api, agent, i));
    return { backend: target.backend, agent, clients, round, ...measured };
  } finally {
    api.close();
  }
}

/** The benchmark's own process, whose CPU the in-process rows count. */
export const THIS_PROCESS = { groups: { api: [process.pid], workers: [], redis: [] } };

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
  const measured = await measureClosedLoop(THIS_PROCESS, clients, warmup, runs, async (i) => {
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
