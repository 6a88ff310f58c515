import type { Run } from '../../domain/types.js';
import type { RunAttempt } from './run-attempt.js';

/**
 * What executes a kind of agent: the node loop of `defineAgent` agents (src/runtime/native/),
 * the stream loop of LangGraph graphs (src/langgraph/run-engine.ts). The driver
 * (src/runtime/run/run-driver.ts) takes the run and hands the engine an attempt; the engine
 * walks the agent and records it through the attempt, which owns everything else: the abort
 * signal, journal steps, pausing on interrupts, failing, noticing a stop, completing.
 */
export interface RunEngine {
  /**
   * Whether taking the run announces the session's next node (`node_start`): true where the
   * checkpoint names one node to run next (native agents); false where the engine announces
   * its tasks itself as it plans them (a graph's superstep).
   */
  readonly announcesNext: boolean;
  /** Walks the agent for one attempt; resolves with the run as the attempt left it (undefined when it was gone). */
  drive(attempt: RunAttempt): Promise<Run | undefined>;
}
