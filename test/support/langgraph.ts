import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import type { GraphAgent } from '../../src/runtime/agent.js';

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

/**
 * Polls `probe` every `everyMs` until it answers, with no bound of its own (a loaded machine may
 * take its time; the test's timeout is the bound); rejects once `signal` aborts (the run stopped).
 */
async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, signal: AbortSignal | undefined, everyMs: number): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (signal?.aborted) throw new Error(`stopped waiting for ${what}`, { cause: signal.reason });
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * A point `count` branches of a run must reach before any goes on. A branch waits for the others
 * however late they come, with no clock of its own: branches run one after the other never meet,
 * so the run does not end and the test fails at its own timeout. A branch stops waiting when
 * `signal` (its run's: LangGraph's `config.signal`) aborts, failing with what it means.
 */
export function meeting(count: number): (name: string, signal?: AbortSignal) => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return async (name, signal) => {
    arrived += 1;
    if (arrived === count) release();
    await new Promise<void>((resolve, reject) => {
      const stopped = () => reject(new Error(`branch ${name} was stopped waiting for the other: the branches did not run in parallel`, { cause: signal?.reason }));
      if (signal?.aborted) return stopped();
      signal?.addEventListener('abort', stopped, { once: true });
      void all.then(() => {
        signal?.removeEventListener('abort', stopped);
        resolve();
      });
    });
  };
}

/**
 * The node of each of the two branches of a fan-out that must run at once (`branch(name)`),
 * each appending `name:topic` to the state's `parts`. A branch meets the other (see meeting),
 * then holds until the engine announced both starts (`announced`: how many node_start events of
 * the run it published) and the clock moved on, so the two spans' millisecond times overlap
 * strictly however far the engine trails the graph. No wait has a bound of its own.
 */
export function parallelBranches(
  announced: (runId: string) => Promise<number>,
): (name: string) => (state: { topic: string }, config: LangGraphRunnableConfig) => Promise<{ parts: string[] }> {
  const meet = meeting(2);
  return (name) => async (state, config) => {
    await meet(name, config.signal);
    const runId = String(config.configurable?.run_id);
    const seenAt = await until(`the starts of both branches of run ${runId}`, async () => ((await announced(runId)) === 2 ? Date.now() : undefined), config.signal, 25);
    await until('the next millisecond', () => (Date.now() > seenAt ? true : undefined), config.signal, 1);
    return { parts: [`${name}:${state.topic}`] };
  };
}
