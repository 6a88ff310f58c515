import type { EventBus } from '../ports/event-bus.js';

/**
 * The abort controllers of the runs this process executes, fired when any process signals the
 * run's cancellation (EventBus.signalCancel). The event is best effort (a disconnect can drop it); the run's
 * checkpoint writes are conditional on it still running, so a missed one costs at most the
 * rest of the node.
 */
export class RunSignals {
  private readonly controllers = new Map<string, AbortController>();
  private readonly unsubscribe: () => void;

  constructor(events: EventBus) {
    this.unsubscribe = events.onCancel((signal) => this.abort(signal.run_id, signal.reason));
  }

  /** A controller for a run this process starts executing. */
  open(runId: string): AbortController {
    const controller = new AbortController();
    this.controllers.set(runId, controller);
    return controller;
  }

  release(runId: string, controller: AbortController): void {
    if (this.controllers.get(runId) === controller) this.controllers.delete(runId);
  }

  abort(runId: string, reason: string): void {
    this.controllers.get(runId)?.abort(new RunCancelled(reason));
  }

  /** Stops listening (a shutdown lets running nodes finish: it aborts nothing). */
  close(): void {
    this.unsubscribe();
  }
}

/** The abort reason of a cancelled run (`timeout` for a deadline). */
export class RunCancelled extends Error {
  constructor(readonly reason: string) {
    super(`The run was cancelled (${reason}).`);
    this.name = 'RunCancelled';
  }
}
