import { GraphRecursionError } from '@langchain/langgraph';
import { AppError, isUnavailable } from '../domain/errors.js';
import { withErrorClass } from '../domain/error-class.js';
import { clip, END_NODE, errorMessage, MAX_ERROR_CHARS, type Run } from '../domain/types.js';
import type { RunAttempt, StepOutcome } from '../runtime/run/run-attempt.js';
import type { Streamed } from './chunk-router.js';
import type { AnyGraph } from './graph-loader.js';
import { interruptsOf, pauseRequestOf, type PendingInterrupt } from './run-input.js';
import type { SuperstepRecorder } from './superstep-recorder.js';

/** The run pauses: one pending approval per interrupt (a run paused on several resumes once each is answered). */
export async function pauseOn(attempt: RunAttempt, interrupts: PendingInterrupt[]): Promise<Run | undefined> {
  const paused = await attempt.pause(interrupts.map((pending) => pauseRequestOf(attempt.run.id, pending)));
  return paused.kind === 'paused' ? paused.run : attempt.current();
}

/**
 * How a graph's run ends: completed with its last checkpoint (or as it is), paused on the
 * interrupts its tasks raised or its state waits on, failed, or stopped. Each ending records the
 * superstep's tasks with it: those that returned, and the open ones with the run's status.
 */
export class GraphRunEnding {
  constructor(
    private readonly attempt: RunAttempt,
    private readonly steps: SuperstepRecorder,
    /** Stops the graph's stream. */
    private readonly halt: AbortController,
  ) {}

  /** The run was cancelled (the canceller ended it) or is gone: the graph stops, the open tasks' spans say so. */
  async stopped(): Promise<Run | undefined> {
    this.halt.abort();
    // A run that is gone (deleted, lost with the backend's data) leaves nothing behind.
    const current = await this.attempt.current();
    if (current) await this.steps.flush('cancelled');
    return current;
  }

  /** The graph failed with `message`: its open tasks' spans say so, the run fails. */
  async failed(message: string, error?: unknown): Promise<Run | undefined> {
    await this.steps.flush('error', message);
    this.attempt.logger.warn({ err: error ?? message, run_id: this.attempt.run.id }, 'graph run failed');
    return this.attempt.fail(message);
  }

  /** The ending a step that was not recorded brings (the run stopped, or the step refused); none for a recorded one. */
  unrecorded(step: StepOutcome): Promise<Run | undefined> | undefined {
    if (step.kind === 'stopped') return this.stopped();
    if (step.kind === 'refused') return this.failed(step.message);
    return undefined;
  }

  /**
   * The ending of a stream that threw: stopped when the run was cancelled (the graph halted, or a
   * write refused once the run was no longer running); the error again when the backend is
   * unavailable (the job is tried again); else failed, the error's class with its message.
   */
  thrown(error: unknown, recursionLimit: number): Promise<Run | undefined> {
    if (this.halt.signal.aborted || (error instanceof AppError && error.code === 'conflict')) return this.stopped();
    if (isUnavailable(error)) throw error;
    const message =
      error instanceof GraphRecursionError ? `The graph exceeded its step limit (recursionLimit ${recursionLimit}): ${errorMessage(error)}` : errorMessage(error);
    // The class stays with the run's error (`CustomError: Boo!`): LangGraph clients see it.
    return this.failed(clip(withErrorClass(error, message), MAX_ERROR_CHARS), error);
  }

  /** The ending of a stream that ended: paused on what waits, else completed (`config` names the thread, to read what waits). */
  async streamEnded(streamed: Readonly<Streamed>, graph: AnyGraph, config: { configurable: Record<string, unknown> }): Promise<Run | undefined> {
    const { attempt, steps } = this;
    const { last, next, sawInterrupt } = streamed;
    if (sawInterrupt || (next.length > 0 && !last)) {
      // The interrupts the tasks raised, as the stream told them; a stop before or after a node
      // (nothing raised) asks the state what waits.
      const pending = sawInterrupt ? steps.interrupts() : interruptsOf(await graph.getState(config));
      if (pending.length > 0) {
        // Tasks that returned in the paused step keep their writes: they are not run again.
        await steps.flush('interrupted');
        return pauseOn(attempt, pending);
      }
    }
    if (last) {
      const recorded = await steps.step(last.patch, END_NODE);
      const ended = this.unrecorded(recorded);
      if (ended) return ended;
      if (recorded.kind === 'recorded' && recorded.result.completed) return attempt.completedBy({ ...recorded.result, completed: recorded.result.completed });
    }
    // Stopped without a last checkpoint (an interrupt_before with nothing pending): the run completes as it is.
    await steps.flush('ok');
    return attempt.complete();
  }
}
