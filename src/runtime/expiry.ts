import type { Logger } from 'pino';
import type { Store } from '../ports/store.js';
import { every } from './every.js';

/** Sessions removed per store call; a sweep calls again while a batch comes back full. */
const BATCH = 500;

export interface ExpiryOptions {
  store: Pick<Store, 'sessions'>;
  /** SERVICE_SESSION_TTL in ms: sessions idle longer are removed. */
  ttlMs: number;
  logger: Logger;
  /** Called with the count of each sweep that removed sessions (metrics). */
  onExpired?: (count: number) => void;
  /** @defaultValue Date.now */
  clock?: () => number;
  /** Pause between sweeps. @defaultValue a tenth of the TTL, between 1 s and 60 s */
  everyMs?: number;
}

/**
 * Removes idle sessions every so often: each sweep expires, batch by batch, every session
 * whose last write is older than the TTL (see SessionStore.expireSessions). Several workers may
 * sweep at once: each removal is one atomic step that a second sweeper finds already done.
 * A failed sweep is logged and tried again at the next one. Returns the function that stops it.
 */
export function startExpiring(options: ExpiryOptions): () => void {
  const { store, ttlMs, logger } = options;
  const clock = options.clock ?? Date.now;
  const everyMs = options.everyMs ?? Math.min(60_000, Math.max(1_000, Math.floor(ttlMs / 10)));
  let stopped = false;
  const sweep = async () => {
    let removed = 0;
    for (;;) {
      const batch = await store.sessions.expireSessions(clock() - ttlMs, BATCH);
      removed += batch;
      if (batch < BATCH || stopped) break;
    }
    if (removed > 0) {
      logger.info({ removed, ttlMs }, 'idle sessions expired');
      options.onExpired?.(removed);
    }
  };
  const stop = every(everyMs, sweep, logger, 'session expiry sweep');
  return () => {
    stopped = true;
    stop();
  };
}
