import type { Logger } from 'pino';
import type { RunStore } from '../ports/store.js';

export interface RunWatchOptions {
  runs: Pick<RunStore, 'getRun'>;
  /** How often the watched runs are read while any is watched (SERVICE_SSE_HEARTBEAT_MS). */
  intervalMs: number;
  logger: Logger;
}

/**
 * Notices the runs that vanished under the requests following them: a run whose session was
 * removed (deleted, expired, or lost by a Redis that lost its data) publishes no further event,
 * so a wait would only end when `wait_ms` passes and a stream never. Every `intervalMs`, while
 * anything is watched, each watched run is read once (one read per run, however many follow
 * it) and the followers of a run that no longer exists are told, once. A read that fails (the
 * storage unreachable) proves nothing: that run is read again at the next check.
 */
export class RunWatch {
  /** Followers' callbacks by `tenant \0 run id`. */
  private readonly watched = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly options: RunWatchOptions) {}

  /** Number of distinct runs watched. */
  get size(): number {
    return this.watched.size;
  }

  /** Calls `onGone` once if the run is found missing. Returns the function that stops watching. */
  watch(tenant: string, runId: string, onGone: () => void): () => void {
    const key = `${tenant}\u0000${runId}`;
    const followers = this.watched.get(key) ?? new Set();
    this.watched.set(key, followers);
    // A function of its own per watch: the same callback given twice is two followers.
    const entry = () => onGone();
    followers.add(entry);
    this.timer ??= setInterval(() => void this.check(), this.options.intervalMs);
    return () => {
      followers.delete(entry);
      if (followers.size === 0 && this.watched.get(key) === followers) this.watched.delete(key);
      this.idle();
    };
  }

  private async check(): Promise<void> {
    // A check slower than the interval (a slow storage) is not stacked with the next one.
    if (this.checking) return;
    this.checking = true;
    try {
      const results = await Promise.allSettled([...this.watched.keys()].map((key) => this.checkOne(key)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) this.options.logger.warn({ err: failed.reason }, 'could not check that followed runs still exist; checking again later');
    } finally {
      this.checking = false;
    }
  }

  private async checkOne(key: string): Promise<void> {
    const [tenant, runId] = key.split('\u0000') as [string, string];
    if (await this.options.runs.getRun(tenant, runId)) return;
    const followers = this.watched.get(key);
    if (!followers) return;
    this.watched.delete(key);
    this.idle();
    for (const gone of followers) gone();
  }

  /** The timer runs only while a run is watched. */
  private idle(): void {
    if (this.watched.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
