import type { Worker } from 'bullmq';
import { withTimeout } from '../../domain/timeout.js';

/** Bound of the close itself once the jobs are done or given up (Redis may be away). */
const CLOSE_MS = 2_000;

/**
 * Closes a BullMQ worker within about `timeoutMs`: it takes no new job, the jobs it holds get
 * until the bound to finish (completion included), and those still running then are abandoned:
 * their locks lapse, and a queue that tries stalled jobs again hands them to another worker.
 *
 * Not `close()` then `close(true)`: BullMQ's second close returns the first one's promise,
 * which waits for every job however long it runs. `pause()` waits the same way without
 * starting the close, so the close that follows can still be forced.
 */
export async function closeWorker(worker: Worker, timeoutMs: number): Promise<void> {
  const drained = await withTimeout(worker.pause(), timeoutMs).then(
    () => true,
    () => false,
  );
  await withTimeout(worker.close(!drained), CLOSE_MS).catch(() => undefined);
}
