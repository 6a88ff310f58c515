import type { Logger } from 'pino';
import type { RunJob, RunQueue } from '../ports/run-queue.js';

/** The warning of an API whose queued runs no worker will take (REDIS_URL set, no worker process). */
export const NO_WORKER_WARNING =
  'runs are queued but no worker is running: start one with `npm run start:worker` (or the worker image) on the same REDIS_URL and SERVICE_KEY_PREFIX; the queued runs start then';

export interface WorkerlessWarningOptions {
  /** At most one warning this often. @defaultValue 60000 */
  warnEveryMs?: number;
  /** After seeing a worker alive, enqueues skip the check this long (no Redis round trip per run). @defaultValue 5000 */
  trustAliveMs?: number;
}

/**
 * The run queue, which logs {@link NO_WORKER_WARNING} when a job is queued while no worker is
 * alive ({@link RunQueue.liveWorkers}), at most once per `warnEveryMs`. The check follows the
 * enqueue without delaying it, one at a time; a failed check says nothing (the enqueue itself
 * reports an unreachable Redis).
 */
export function warnWithoutWorkers(queue: RunQueue, logger: Logger, options: WorkerlessWarningOptions = {}): RunQueue {
  const warnEveryMs = options.warnEveryMs ?? 60_000;
  const trustAliveMs = options.trustAliveMs ?? 5_000;
  let warnedAt = -Infinity;
  let aliveAt = -Infinity;
  let checking = false;

  const check = async (job: RunJob) => {
    const now = Date.now();
    if (checking || now - aliveAt < trustAliveMs || now - warnedAt < warnEveryMs) return;
    checking = true;
    try {
      if ((await queue.liveWorkers()) > 0) aliveAt = Date.now();
      else {
        warnedAt = Date.now();
        logger.warn({ run_id: job.run_id, tenant: job.tenant }, NO_WORKER_WARNING);
      }
    } catch (error) {
      logger.debug({ err: error }, 'counting the live workers failed');
    } finally {
      checking = false;
    }
  };
  const enqueue: RunQueue['enqueue'] = async (job, enqueueOptions) => {
    await queue.enqueue(job, enqueueOptions);
    void check(job);
  };
  // A proxy rather than a copy of the interface: every other method is the queue's own, bound
  // once (not at every call: a start looks at the queue's room through here).
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(queue, {
    get(target, property) {
      if (property === 'enqueue') return enqueue;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (method === undefined) bound.set(property, (method = (value as (...args: unknown[]) => unknown).bind(target)));
      return method;
    },
  });
}
