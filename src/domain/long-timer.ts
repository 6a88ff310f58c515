/**
 * setTimeout's largest delay (2^31-1 ms, about 24.8 days): a longer one fires at once (Node
 * warns and waits 1 ms), so a delay that may come from a client or another service goes
 * through {@link setLongTimeout}.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimer {
  /** Cancels the timer (nothing happens when it already fired). */
  clear(): void;
}

export interface LongTimeoutOptions {
  /** The timer never keeps the process alive on its own. @defaultValue false */
  unref?: boolean;
  /** The longest single setTimeout (tests shorten it). @defaultValue {@link MAX_TIMER_MS} */
  maxTimerMs?: number;
}

/**
 * Calls `callback` once, `delayMs` from now, however long that is: a delay past `maxTimerMs`
 * is waited in steps of at most `maxTimerMs`, re-armed on each wake until the due time (by the
 * wall clock, `Date.now`) has come. A delay that is no finite number, or ≤ 0, fires at once.
 */
export function setLongTimeout(callback: () => void, delayMs: number, options: LongTimeoutOptions = {}): LongTimer {
  const maxTimerMs = options.maxTimerMs ?? MAX_TIMER_MS;
  const dueMs = Date.now() + (Number.isFinite(delayMs) ? Math.max(delayMs, 0) : 0);
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const arm = (): void => {
    const remainingMs = dueMs - Date.now();
    timer = setTimeout(wake, Math.min(Math.max(remainingMs, 0), maxTimerMs));
    if (options.unref) timer.unref();
  };
  const wake = (): void => {
    if (cleared) return;
    if (Date.now() < dueMs) return arm();
    cleared = true;
    callback();
  };
  arm();
  return {
    clear() {
      cleared = true;
      clearTimeout(timer);
    },
  };
}
