import type { Run } from '../../domain/types.js';
import type { Agent, GraphAgent, NativeAgent } from '../agent.js';
import type { RunAttempt } from './run-attempt.js';

/**
 * What executes a kind of agent: the node loop of `defineAgent` agents (src/runtime/native/),
 * the stream loop of LangGraph graphs (src/langgraph/run-engine.ts). The driver
 * (src/runtime/run/run-driver.ts) takes the run, resolves its agent and hands the engine an
 * attempt; the engine walks the agent and records it through the attempt, which owns everything
 * else: the abort signal, journal steps, pausing on interrupts, failing, noticing a stop, completing.
 */
export interface RunEngine<A extends Agent> {
  /** Walks `agent` (the run's) for one attempt; resolves with the run as the attempt left it (undefined when it was gone). */
  drive(attempt: RunAttempt, agent: A): Promise<Run | undefined>;
}

/**
 * The engines of a process by the kind of agent they run, held by the composition root: `graph`
 * only when graphs are configured (the LangGraph plug-in's).
 */
export interface RunEngines {
  readonly native: RunEngine<NativeAgent>;
  readonly graph?: RunEngine<GraphAgent> | undefined;
}
