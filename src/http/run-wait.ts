import type { Context } from 'koa';
import { z } from 'zod';
import { runGone } from '../domain/errors.js';
import type { Approval, Principal, Run, StoredEvent } from '../domain/types.js';
import { RunFollower, type RunFollowerOptions } from '../runtime/run-follower.js';
import type { AppDeps } from './deps.js';

/** How long the event subscription may take before a wait gives up with 503 (the client retries). */
const READY_TIMEOUT_MS = 5_000;

export const WaitMs = z
  .number()
  .int()
  .min(1)
  .max(300_000)
  .meta({ description: 'hold the answer until the run stops (completed, failed, cancelled, interrupted) or this many ms pass (default 60000)' });

export const DEFAULT_WAIT_MS = 60_000;

/** What a wait answers: the run, its latest state, and the approval it waits for when interrupted. */
export interface WaitedRun extends Run {
  state?: Record<string, unknown>;
  approval?: Pick<Approval, 'id' | 'prompt' | 'node_id' | 'requested_at' | 'payload'>;
}

/**
 * A request held until a run stops: counted against the caller's wait cap and in the waits
 * gauge, its socket timeout cleared (SERVICE_REQUEST_TIMEOUT_MS only bounds receiving the
 * request), answered at graceful shutdown with the run as it stands. It subscribes first
 * (before anything changes); after the caller started or resumed the run and named it with
 * `follow`, `until` resolves with the run's next stop event, or null when `waitMs` passed, the
 * client left or the process is shutting down; it rejects with `gone` (410) when the run
 * vanished with its session.
 */
export async function holdForRun(deps: AppDeps, ctx: Context, principal: Principal): Promise<HeldWait> {
  const { follower, done } = await beginFollowing(deps, principal, deps.streams.admitWait(principal, ctx.ip));
  ctx.req.socket.setTimeout(0);
  return {
    follow: (runId, isStale) => follower.follow(runId, isStale),
    async until(waitMs: number): Promise<StoredEvent | null> {
      let timer: NodeJS.Timeout | undefined;
      let forget = () => {};
      let onClose = () => {};
      try {
        return await Promise.race([
          follower.nextStop(),
          new Promise<null>((resolve) => {
            timer = setTimeout(() => resolve(null), waitMs);
            forget = deps.streams.hold(() => resolve(null));
            onClose = () => resolve(null);
            ctx.res.once('close', onClose);
          }),
        ]);
      } finally {
        clearTimeout(timer);
        forget();
        ctx.res.off('close', onClose);
      }
    },
    done,
  };
}

/**
 * What a wait and a run stream share before the run moves: `release` is the caller's admission
 * (a wait's or a stream's, 429 already thrown over its cap), a follower of the tenant's events
 * is subscribed, watched for its run vanishing, and live delivery is established (503
 * otherwise). `done` unsubscribes and releases the admission, once.
 */
export async function beginFollowing(
  deps: AppDeps,
  principal: Principal,
  release: () => void,
  options: Pick<RunFollowerOptions, 'onEvent' | 'onGone'> = {},
): Promise<{ follower: RunFollower; done: () => void }> {
  const follower = new RunFollower(deps.events, principal.tenant, { ...options, watch: deps.runWatch });
  const done = () => {
    follower.close();
    release();
  };
  try {
    await deps.events.ready(READY_TIMEOUT_MS);
  } catch (error) {
    done();
    throw error;
  }
  return { follower, done };
}

export interface HeldWait {
  /** See {@link RunFollower.follow}. */
  follow(runId: string, isStale?: (event: StoredEvent) => boolean): void;
  until(waitMs: number): Promise<StoredEvent | null>;
  /** Unsubscribes and releases the caller's admission. Call once, whatever happened. */
  done(): void;
}

/**
 * The run as a wait answers it: with its state and, when interrupted, its approval. `stop` is
 * the event it stopped with (null: it has not stopped; `stopped`: it had stopped before the
 * wait began, a start answered from its Idempotency-Key); when that carries the run as it
 * ended (StoredEvent.stop), nothing is read back. Throws `gone` when the run no longer exists.
 */
export async function waitedRun(
  deps: AppDeps,
  tenant: string,
  ref: { run_id: string; session_id: string },
  stop: StoredEvent | 'stopped' | null,
): Promise<WaitedRun> {
  if (typeof stop === 'object' && stop?.stop && stop.stop.run.id === ref.run_id) return { ...stop.stop.run, state: stop.stop.state };
  if (!stop) {
    const run = await deps.store.runs.getRun(tenant, ref.run_id);
    if (!run) throw runGone(ref.run_id);
    return run;
  }
  // The run and the latest state are read at once; when a run queued behind has moved the
  // session on since, the checkpoint this run stopped at is read instead.
  const [run, latest] = await Promise.all([deps.store.runs.getRun(tenant, ref.run_id), deps.store.sessions.getCheckpoint(tenant, ref.session_id)]);
  if (!run) throw runGone(ref.run_id);
  const checkpoint =
    run.seq_num === undefined || latest?.seq_num === run.seq_num ? latest : await deps.store.sessions.getCheckpoint(tenant, ref.session_id, run.seq_num);
  const approval = run.status === 'interrupted' && run.approval_id ? await deps.store.approvals.getApproval(tenant, run.approval_id) : null;
  return {
    ...run,
    ...(checkpoint ? { state: checkpoint.state } : {}),
    ...(approval ? { approval: pendingOf(approval) } : {}),
  };
}

/** What a wait tells of the request its run waits for (its `payload` when it carries one). */
function pendingOf(approval: Approval): NonNullable<WaitedRun['approval']> {
  const { id, prompt, node_id, requested_at, payload } = approval;
  return { id, prompt, node_id, requested_at, ...(payload === undefined ? {} : { payload }) };
}
