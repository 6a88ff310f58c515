import type { Logger } from 'pino';
import { isAppError } from '../domain/errors.js';
import type { Run } from '../domain/types.js';
import type { Store } from '../ports/store.js';
import type { RunWebhooks } from './run-webhooks.js';

export interface TemporarySessionsOptions {
  store: Pick<Store, 'sessions'>;
  webhooks: Pick<RunWebhooks, 'queued' | 'storedInput'>;
  logger: Logger;
}

/**
 * The sessions that go with their run (StartRunRequest.temporary: LangGraph's stateless runs
 * that nobody waits for). When such a run ends, the process that ended it deletes its session,
 * as LangGraph's server deletes a temporary thread once its run ends, and never before the
 * run's webhook is queued (the delivery reads the run's input and state, which go with it).
 */
export interface TemporarySessions {
  /** A run ended (completed, failed, cancelled): its session goes if it was started temporary. Never throws. */
  ended(tenant: string, run: Run): void;
  /** Waits for the deletions under way. */
  close(): Promise<void>;
}

export function createTemporarySessions(options: TemporarySessionsOptions): TemporarySessions {
  const { store, webhooks, logger } = options;
  const running = new Set<Promise<void>>();

  const remove = async (tenant: string, run: Run): Promise<void> => {
    // The read the run's webhook started for the same end (one round trip per end, not two).
    const stored = await webhooks.storedInput(tenant, run.id);
    if (stored === null || (JSON.parse(stored) as { temporary?: unknown }).temporary !== true) return;
    await webhooks.queued(tenant, run.id);
    await store.sessions.deleteSession(tenant, run.session_id);
  };

  return {
    ended(tenant, run) {
      const task: Promise<void> = remove(tenant, run)
        .catch((error: unknown) => {
          // Gone already; else left, logged, to expire as any session does.
          if (isAppError(error) && error.code === 'not_found') return;
          logger.warn({ err: error, tenant, run_id: run.id, session_id: run.session_id }, 'the session of a temporary run was not deleted');
        })
        .finally(() => running.delete(task));
      running.add(task);
    },

    async close() {
      await Promise.allSettled([...running]);
    },
  };
}
