import type { Logger } from 'pino';
import type { RunQueue } from '../ports/run-queue.js';
import type { Store } from '../ports/store.js';
import type { RunLifecycle } from './run-lifecycle.js';

/** Active runs inspected per pass at most. */
const LIMIT = 1_000;

export interface ReaperOptions {
  store: Pick<Store, 'runs' | 'leases'>;
  queue: RunQueue;
  lifecycle: RunLifecycle;
  logger: Logger;
  /** Pause between passes; also how long a run must sit unchanged before it is inspected. */
  everyMs: number;
  /**
   * Called with the stuck runs each pass found (the gauge `agentplane_runs_stuck`); with 0
   * when another process holds the lease, so only the last pass's holder reports any and the
   * sum over workers is the count.
   */
  onStuck?: (count: number) => void;
  /** @defaultValue Date.now */
  clock?: () => number;
}

/**
 * Settles runs that nothing will move on: a `queued` or `running` run with no live job (the
 * job was deleted, removed, or finished without ending its run) ends `failed` with the reason,
 * and a session whose active run ended with runs still queued behind it starts the next. One
 * pass at a time across every worker (a lease), every `everyMs`; runs changed within the last
 * `everyMs` are left alone (their job is still being enqueued).
 */
export function createReaper(options: ReaperOptions): { pass(): Promise<number> } {
  const { store, queue, lifecycle, logger } = options;
  const clock = options.clock ?? Date.now;

  return {
    /** One pass, when this process holds the lease; resolves with the stuck runs it found. */
    async pass(): Promise<number> {
      if (!(await store.leases.acquire('reaper', options.everyMs))) {
        options.onStuck?.(0);
        return 0;
      }
      const active = await store.runs.listActiveRuns(clock() - options.everyMs, LIMIT);
      let stuck = 0;
      for (const { tenant, run, behind } of active) {
        if (behind) {
          const started = await lifecycle.promote(tenant, run.session_id);
          if (started) logger.warn({ run_id: started.id, session_id: run.session_id }, 'reaper started a run left queued behind an ended one');
          continue;
        }
        if (run.status === 'interrupted' || (await queue.hasLiveJob(run))) continue;
        stuck += 1;
        const error = `The run was ${run.status} with no job left to execute it; ended by the reaper.`;
        const ended = await lifecycle.end(tenant, run.id, { status: 'failed', error, from: [run.status] });
        if (ended) logger.warn({ run_id: run.id, tenant, was: run.status }, 'reaper ended a stuck run');
      }
      options.onStuck?.(stuck);
      return stuck;
    },
  };
}
