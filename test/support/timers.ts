import { createHook } from 'node:async_hooks';

/** What Node keeps on a Timeout: whether it is done (fired or cleared) and its delay. */
type TimeoutInternals = { _destroyed: boolean; _idleTimeout: number };

/** The timers of this process created since {@link trackTimers}. */
export interface TrackedTimers {
  /** How many are still armed and keep the process alive. */
  pending(): number;
  /**
   * How many of a `ms` delay ran out (their callback ran): that a wait of `ms` did not run out
   * before something resolved shows it did not wait for it.
   */
  fired(ms: number): number;
  stop(): void;
}

/**
 * Follows every timer created from now on in this process. Unlike a global count, timers of
 * the test runner do not blur it.
 */
export function trackTimers(): TrackedTimers {
  const internals = (timer: NodeJS.Timeout) => timer as unknown as TimeoutInternals;
  // Each timer with its delay as armed (clearing a timer, even in its own callback, resets it).
  const timers = new Map<number, { timer: NodeJS.Timeout; delayMs: number }>();
  const fired: number[] = [];
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const timer = resource as NodeJS.Timeout;
      timers.set(id, { timer, delayMs: internals(timer)._idleTimeout });
    },
    before(id) {
      const tracked = timers.get(id);
      if (tracked) fired.push(tracked.delayMs);
    },
  }).enable();
  return {
    pending: () => [...timers.values()].filter(({ timer }) => timer.hasRef() && !internals(timer)._destroyed).length,
    fired: (ms) => fired.filter((delayMs) => delayMs === ms).length,
    stop: () => hook.disable(),
  };
}
