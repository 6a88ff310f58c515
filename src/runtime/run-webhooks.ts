import type { Logger } from 'pino';
import { DEFAULT_WEBHOOK_TIMEOUT_MS, isWebhookPath, webhookOrigin } from '../domain/run-webhook.js';
import { signStandardWebhook } from '../domain/standard-webhooks.js';
import { TERMINAL_RUN_STATUSES, type JsonObject, type Run } from '../domain/types.js';
import type { Store, UpdatedRun } from '../ports/store.js';
import type { WebhookJob, WebhookQueue } from '../ports/webhook-queue.js';
import { checkedAddresses, resolveWithDns, WebhookAddressRefused, type ResolveHost } from './webhook-address.js';
import { inJobTrace, webhookTrace } from './run-trace-context.js';
import { postWebhook } from './webhook-post.js';

export interface RunWebhooksOptions {
  store: Pick<Store, 'runs' | 'sessions'>;
  queue: WebhookQueue;
  logger: Logger;
  /** The run as a LangGraph client reads it (run_id, thread_id, assistant_id, status, metadata, …), from the run and what it was started with. */
  describe(run: Run, asked: Record<string, unknown>): JsonObject;
  /** The key of SERVICE_WEBHOOK_SIGNING_SECRET; without it deliveries carry no `webhook-signature`. */
  signingKey?: Buffer;
  /** SERVICE_WEBHOOK_ALLOW_PRIVATE: deliver to loopback, link-local and private addresses too. */
  allowPrivate: boolean;
  /** Upper bound of one attempt, connection to the answer's status (SERVICE_WEBHOOK_TIMEOUT_MS). @defaultValue DEFAULT_WEBHOOK_TIMEOUT_MS */
  timeoutMs?: number;
  /** @defaultValue node's dns.lookup */
  resolve?: ResolveHost;
  /** @defaultValue Date.now */
  clock?: () => number;
  /** Where a webhook that is a path goes: the `http.app` of langgraph.json in this process (a fetch without the network). */
  loopback?: (path: string, init: RequestInit) => Promise<Response>;
}

/**
 * Run webhooks (LangGraph's `webhook`): when a run started with one ends, its delivery is
 * enqueued with the run as the body, and workers POST it with the Standard Webhooks headers.
 * Nothing of it is on the run path: the end only starts the enqueue, and attempts happen on
 * the webhook queue, retried with a doubling pause.
 */
export interface RunWebhooks {
  /**
   * A run reached completed, failed or cancelled: its delivery is enqueued when it was started
   * with a webhook (one read of the run's input, in the background, unless the run carries it;
   * never throws).
   */
  ended(tenant: string, run: UpdatedRun): void;
  /** Resolves once the enqueue {@link ended} started for the run is done (at once when none is under way). */
  enqueued(runId: string): Promise<void>;
  /**
   * Before an ended run goes (with its session): enqueues its delivery now, from the run as
   * stored, when it was started with a webhook. A run has one delivery, so this collapses into
   * the one {@link ended} enqueues, whichever process and whichever comes first. Resolves once
   * it is queued (at once for a run gone, active, or without webhook); throws when the enqueue
   * failed: the caller must then keep the run.
   */
  queued(tenant: string, runId: string): Promise<void>;
  /**
   * The run's stored input (what it was started with beside its input, as JSON text; null for
   * none): the read {@link ended} started for the run while its enqueue is under way, so that
   * whoever else handles the end (its temporary session) reads it from there, else read now.
   */
  storedInput(tenant: string, runId: string): Promise<string | null>;
  /** One attempt (the consumer's handler): resolves when done for good, throws to be tried again. */
  deliver(job: WebhookJob, attempt: number): Promise<void>;
  /** A delivery whose last attempt failed (the consumer's `onFailed`). */
  gaveUp(job: WebhookJob, error: Error): void;
  /** Waits for the enqueues under way. */
  close(): Promise<void>;
}

/** Answers after which another attempt may succeed: a timeout, too many requests, a server error. */
const retried = (status: number) => status === 408 || status === 429 || status >= 500;

export function createRunWebhooks(options: RunWebhooksOptions): RunWebhooks {
  const { store, queue, logger } = options;
  const clock = options.clock ?? Date.now;
  const resolve = options.resolve ?? resolveWithDns;
  /** Enqueues under way, by run id. */
  const enqueuing = new Map<string, Promise<void>>();
  /** The stored input each enqueue under way read, by run id. */
  const inputs = new Map<string, Promise<string | null>>();

  const payloadOf = async (tenant: string, run: Run, asked: Record<string, unknown>): Promise<JsonObject> => {
    // The values the run ended with, as LangGraph sends a run's last checkpoint; a cancelled run has none.
    const checkpoint = run.status === 'cancelled' ? null : await store.sessions.getCheckpoint(tenant, run.session_id, run.seq_num);
    return {
      ...options.describe(run, asked),
      run_ended_at: run.updated_at,
      ...(checkpoint ? { values: checkpoint.state } : {}),
      ...(run.status !== 'completed' && run.error ? { error: run.error } : {}),
    };
  };

  const enqueue = async (tenant: string, run: Run, input = store.runs.getRunInput(tenant, run.id)): Promise<void> => {
    const stored = await input;
    if (stored === null) return;
    const asked = JSON.parse(stored) as Record<string, unknown>;
    if (typeof asked.webhook !== 'string') return;
    await queue.enqueue({ tenant, run_id: run.id, url: asked.webhook, payload: await payloadOf(tenant, run, asked), ...webhookTrace(asked) });
  };

  const headersOf = (job: WebhookJob, body: Buffer, sentAtMs: number): Record<string, string> => {
    const id = `msg_${job.run_id}`;
    const timestamp = String(Math.floor(sentAtMs / 1000));
    const signature = options.signingKey ? `v1,${signStandardWebhook(options.signingKey, id, timestamp, body)}` : undefined;
    return {
      'content-type': 'application/json',
      'user-agent': 'agentplane-webhooks',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      ...(signature ? { 'webhook-signature': signature } : {}),
    };
  };

  /** What a receiver's status means: delivered, another attempt (throws), or refused for good. */
  const answered = (status: number, where: Record<string, unknown>): void => {
    if (status >= 200 && status < 300) {
      logger.info({ ...where, status }, 'run webhook delivered');
      return;
    }
    if (retried(status)) {
      logger.info({ ...where, status }, 'run webhook attempt failed');
      throw new Error(`run webhook: answered ${status}`);
    }
    logger.warn({ ...where, status }, 'run webhook refused by its receiver; not tried again');
  };

  /** A path webhook, to this process's http.app (no address to check: it never leaves the process). */
  const deliverToApp = async (job: WebhookJob, where: Record<string, unknown>): Promise<void> => {
    if (!options.loopback) {
      logger.warn(where, 'run webhook not delivered: it is a path, and this process has no http.app of langgraph.json');
      return;
    }
    const sentAtMs = clock();
    const body = Buffer.from(JSON.stringify({ ...job.payload, webhook_sent_at: new Date(sentAtMs).toISOString() }));
    let status: number;
    try {
      const response = await options.loopback(job.url, {
        method: 'POST',
        headers: headersOf(job, body, sentAtMs),
        body,
        signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS),
      });
      status = response.status;
      await response.body?.cancel();
    } catch (error) {
      logger.info({ ...where, err: error }, 'run webhook attempt failed: no answer');
      throw new Error('run webhook: no answer', { cause: error });
    }
    answered(status, where);
  };

  return {
    ended(tenant, run) {
      const input = run.stored_input === undefined ? store.runs.getRunInput(tenant, run.id) : Promise.resolve(run.stored_input);
      const task: Promise<void> = enqueue(tenant, run, input)
        .catch((error: unknown) => logger.warn({ err: error, tenant, run_id: run.id }, 'run webhook not enqueued'))
        .finally(() => {
          if (enqueuing.get(run.id) === task) {
            enqueuing.delete(run.id);
            inputs.delete(run.id);
          }
        });
      enqueuing.set(run.id, task);
      inputs.set(run.id, input);
    },

    storedInput(tenant, runId) {
      return inputs.get(runId) ?? store.runs.getRunInput(tenant, runId);
    },

    async enqueued(runId) {
      await enqueuing.get(runId);
    },

    async queued(tenant, runId) {
      const run = await store.runs.getRun(tenant, runId);
      if (run && TERMINAL_RUN_STATUSES.includes(run.status)) await enqueue(tenant, run);
    },

    async deliver(job, attempt) {
      const where = { tenant: job.tenant, run_id: job.run_id, webhook: webhookOrigin(job.url), attempt };
      if (isWebhookPath(job.url)) return deliverToApp(job, where);
      const url = new URL(job.url);
      let addresses;
      try {
        addresses = await checkedAddresses(url.hostname, options.allowPrivate, resolve);
      } catch (error) {
        if (error instanceof WebhookAddressRefused) {
          logger.warn({ ...where, reason: error.message }, 'run webhook refused: its address is not allowed');
          return;
        }
        throw new Error(`run webhook: ${url.hostname} did not resolve`, { cause: error });
      }
      const sentAtMs = clock();
      const body = Buffer.from(JSON.stringify({ ...job.payload, webhook_sent_at: new Date(sentAtMs).toISOString() }));
      let status: number;
      try {
        const post = { url, body, headers: headersOf(job, body, sentAtMs), addresses, timeoutMs: options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS };
        // The POST is a client span of the run's trace, whichever worker makes it.
        status = await inJobTrace(job.trace, () => postWebhook(post));
      } catch (error) {
        logger.info({ ...where, err: error }, 'run webhook attempt failed: no answer');
        throw new Error('run webhook: no answer', { cause: error });
      }
      answered(status, where);
    },

    gaveUp(job, error) {
      logger.warn({ tenant: job.tenant, run_id: job.run_id, webhook: webhookOrigin(job.url), err: error }, 'run webhook not delivered: out of attempts');
    },

    async close() {
      await Promise.allSettled([...enqueuing.values()]);
    },
  };
}
