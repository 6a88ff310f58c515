import { setLongTimeout } from '../../domain/long-timer.js';

/**
 * Waits `ms` milliseconds, or less when `signal` aborts; never rejects. The timer is cleared
 * on abort so a stopped loop leaves no pending timer behind. `ms` may come from a platform
 * (a 429's retry_after): one past setTimeout's limit is waited in full, not turned into 1 ms.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      timer.clear();
      resolve();
    };
    const timer = setLongTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
