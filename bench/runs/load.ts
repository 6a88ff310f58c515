import { performance } from 'node:perf_hooks';
import { isCluster, type RedisClient } from '../../src/adapters/redis/connection.js';
import { ApiClient } from '../harness/client.js';

/** What one batch of runs measured. Times in milliseconds. */
export interface BatchResult {
  /** Runs accepted (202) and seen finishing. */
  runs: number;
  /** Runs that ended `failed` instead of `completed`. */
  failed: number;
  /** POSTs not answered 202. */
  rejected: number;
  /** First POST sent → last run finished. */
  elapsedMs: number;
  /** Finished runs per second over the batch. */
  runsPerSec: number;
  /** Accepted POSTs per second (first POST sent → last POST answered). */
  acceptedPerSec: number;
  /** Most runs accepted but not yet finished at any moment (the queue backlog). */
  peakBacklog: number;
  /** POST sent → `completed` event received, sorted ascending. */
  latenciesMs: number[];
}

/** Called once per run that ended: its id, POST sent → end received, completed or failed, when. */
export type RunEndListener = (runId: string, latencyMs: number, ok: boolean, at: number) => void;

/**
 * Watches the event channel (`<prefix>:events`, messages `{id, tenant, event}`; on a Redis
 * Cluster the tenant's sharded channel, `<prefix>:{<tenant>}:events:live`) for the end of runs.
 * A run's end may be announced before its POST is answered, so both orders are matched.
 */
export class RunEndWatcher {
  private readonly sentAt = new Map<string, number>();
  private readonly endedEarly = new Map<string, { at: number; ok: boolean }>();
  private onEnd: RunEndListener | undefined;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly channel: string,
  ) {
    subscriber.on(isCluster(subscriber) ? 'smessage' : 'message', (ch: string, message: string) => {
      if (ch !== channel) return;
      // Five events per echo run; only the last one is parsed.
      const completed = message.includes('"type":"completed"');
      if (!completed && !message.includes('"type":"failed"')) return;
      const runId = (JSON.parse(message) as { event: { run_id: string } }).event.run_id;
      this.ended(runId, performance.now(), completed);
    });
  }

  async start(): Promise<void> {
    if (isCluster(this.subscriber)) await this.subscriber.ssubscribe(this.channel);
    else await this.subscriber.subscribe(this.channel);
  }

  /** Routes the ends of runs to `listener` until the next call. */
  listen(listener: RunEndListener): void {
    this.onEnd = listener;
  }

  /** The POST of `runId`, sent at `sentAt`, was accepted. */
  accepted(runId: string, sentAt: number): void {
    const early = this.endedEarly.get(runId);
    if (early) {
      this.endedEarly.delete(runId);
      this.onEnd?.(runId, early.at - sentAt, early.ok, early.at);
    } else this.sentAt.set(runId, sentAt);
  }

  private ended(runId: string, at: number, ok: boolean): void {
    const sent = this.sentAt.get(runId);
    if (sent === undefined) {
      this.endedEarly.set(runId, { at, ok });
      return;
    }
    this.sentAt.delete(runId);
    this.onEnd?.(runId, at - sent, ok, at);
  }
}

export interface BatchOptions {
  apiUrl: string;
  runs: number;
  /** POSTs in flight at most. */
  clients: number;
  /**
   * Each client waits for its run to end before it POSTs the next one, so at most `clients`
   * runs are in flight (latency without a queue backlog). @defaultValue false
   */
  closedLoop?: boolean;
  watcher: RunEndWatcher;
  /** Told each accepted run and when (performance.now()) its POST was sent. */
  onAccepted?: (runId: string, sentAt: number) => void;
  /** The batch fails past this. */
  timeoutMs: number;
}

/** Fires `runs` echo runs with at most `clients` POSTs in flight and waits for every run to end. */
export async function fireBatch(options: BatchOptions): Promise<BatchResult> {
  const { apiUrl, runs, clients, watcher } = options;
  const api = new ApiClient(apiUrl, clients);
  const latencies: number[] = [];
  let accepted = 0;
  let rejected = 0;
  let failed = 0;
  let finished = 0;
  let peakBacklog = 0;
  let lastEnd = 0;
  let lastAccept = 0;
  let next = 0;
  let postsDone = false;
  let settle: (() => void) | undefined;
  const allEnded = new Promise<void>((resolve) => (settle = resolve));
  const check = () => {
    if (postsDone && finished === accepted) settle?.();
  };
  const waiting = new Map<string, () => void>();
  watcher.listen((runId, latencyMs, ok, at) => {
    waiting.get(runId)?.();
    waiting.delete(runId);
    finished += 1;
    if (!ok) failed += 1;
    latencies.push(latencyMs);
    lastEnd = at;
    check();
  });

  const started = performance.now();
  const client = async () => {
    while (next < runs) {
      const i = next++;
      const sentAt = performance.now();
      const reply = await api.post<{ run_id: string }>('/api/runs', { agent_id: 'echo', input: { n: i } });
      if (reply.status !== 202) {
        rejected += 1;
        if (rejected === 1) console.error(`POST /api/runs answered ${reply.status}: ${reply.text.slice(0, 300)}`);
        continue;
      }
      accepted += 1;
      lastAccept = performance.now();
      peakBacklog = Math.max(peakBacklog, accepted - finished);
      const runId = reply.body.run_id;
      options.onAccepted?.(runId, sentAt);
      const ended = options.closedLoop ? new Promise<void>((resolve) => waiting.set(runId, resolve)) : undefined;
      watcher.accepted(runId, sentAt);
      await ended;
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`batch timed out after ${options.timeoutMs} ms: ${accepted} accepted, ${finished} ended, ${rejected} rejected`)),
      options.timeoutMs,
    );
  });
  try {
    await Promise.race([Promise.all(Array.from({ length: Math.min(clients, runs) }, client)), timeout]);
    postsDone = true;
    check();
    await Promise.race([allEnded, timeout]);
  } finally {
    clearTimeout(timer);
    watcher.listen(() => {});
    api.close();
  }
  const elapsedMs = lastEnd - started;
  return {
    runs: finished,
    failed,
    rejected,
    elapsedMs,
    runsPerSec: (finished / elapsedMs) * 1000,
    acceptedPerSec: (accepted / (lastAccept - started)) * 1000,
    peakBacklog,
    latenciesMs: latencies.sort((a, b) => a - b),
  };
}
