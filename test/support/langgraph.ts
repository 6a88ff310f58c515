import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import type { GraphAgent } from '../../src/runtime/agent.js';
import { waitFor } from './wait.js';

/**
 * A compiled LangGraph graph (or a function of the run's config answering one) as the agent
 * the registry holds, as the `langgraph.json` loader makes it: for tests that build their
 * graphs in code.
 */
export function graphAgent(id: string, graph: unknown, nodes: readonly string[] = []): GraphAgent {
  return Object.freeze({
    kind: 'graph' as const,
    id,
    description: `LangGraph graph ${id} (test)`,
    entry: '__start__',
    nodeNames: [...nodes],
    graph: {
      kind: 'langgraph' as const,
      graphId: id,
      spec: `test:${id}`,
      load: async (config: Record<string, unknown>) => (typeof graph === 'function' ? (graph as (c: Record<string, unknown>) => unknown)(config) : graph),
    },
  });
}

/** How long a parallel branch waits for the other before it fails the run (they never meet when run one after the other). */
export const MEET_TIMEOUT_MS = 5_000;

/** A point `count` branches of a run must reach before any goes on: a branch left alone fails after MEET_TIMEOUT_MS. */
export function meeting(count: number): (name: string) => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return async (name) => {
    arrived += 1;
    if (arrived === count) release();
    let timer: NodeJS.Timeout | undefined;
    const alone = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`branch ${name} waited ${MEET_TIMEOUT_MS} ms for the other: the branches did not run in parallel`)), MEET_TIMEOUT_MS);
    });
    await Promise.race([all, alone]).finally(() => clearTimeout(timer));
  };
}

/**
 * The node of each of the two branches of a fan-out that must run at once (`branch(name)`),
 * each appending `name:topic` to the state's `parts`. A branch meets the other (see meeting),
 * then holds until the engine announced both starts (`announced`: how many node_start events of
 * the run it published) and the clock moved on, so the two spans' millisecond times overlap
 * strictly however far the engine trails the graph.
 */
export function parallelBranches(
  announced: (runId: string) => Promise<number>,
): (name: string) => (state: { topic: string }, config: LangGraphRunnableConfig) => Promise<{ parts: string[] }> {
  const meet = meeting(2);
  return (name) => async (state, config) => {
    await meet(name);
    const runId = String(config.configurable?.run_id);
    const seenAt = await waitFor(`the starts of both branches of run ${runId}`, async () => ((await announced(runId)) === 2 ? Date.now() : undefined), MEET_TIMEOUT_MS);
    await waitFor('the next millisecond', () => Date.now() > seenAt, MEET_TIMEOUT_MS, 1);
    return { parts: [`${name}:${state.topic}`] };
  };
}
