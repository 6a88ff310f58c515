import type { IncomingHttpHeaders } from 'node:http';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { SpanStatusCode } from '@opentelemetry/api';
import { MemoryDeduplicator } from '../../adapters/memory/deduplicator.js';
import { AppError, isAppError } from '../../domain/errors.js';
import { inEntrySpan } from '../../observability/entry-span.js';
import type { Deduplicator } from '../../ports/deduplicator.js';
import { constantTimeEqual } from '../shared/constant-time-equal.js';
import { InFlight } from '../shared/in-flight.js';
import { serveMiddleware, type ListenAddress, type ListeningServer } from '../../http/listen.js';
import { postEndpoint } from '../shared/post-endpoint.js';
import { parseJsonBody } from '../shared/read-raw-body.js';
import { unauthorized } from '../shared/respond-error.js';
import { silentLogger } from '../shared/silent-logger.js';
import type { SignatureCheck, SignatureVerifier } from '../shared/signature-verifier.js';

/** One delivery, as handed to every matching handler. */
export interface WebhookEvent {
  /** `X-Event-Source`; empty when absent. */
  source: string;
  /** `X-Event-Type`; `generic` when absent. */
  type: string;
  /** The raw request body, byte for byte (for handlers that verify their own signatures). */
  body: Buffer;
  /** The body parsed as JSON (the receiver refuses bodies that are not JSON). */
  payload: unknown;
  /** Every request header, names lower-cased, repeated headers joined with `, `; omitted when empty. */
  headers?: Record<string, string>;
}

/**
 * Handles one delivery; a throw or rejection makes the delivery's answer 500, listing the error's
 * code (an agentplane error's, else `internal`); its message and stack go to the log only. An
 * AppError `payload_too_large` says the delivery can never fit (a run's state limit): when every
 * failure is that one, the answer is 413, which a sender does not retry as it would a 500. An
 * AppError `rate_limited` (the tenant's queue is full) says to retry later: when every failure
 * is that one, the answer is its 429 with its Retry-After, as the API answers a start.
 */
export type WebhookHandler = (event: WebhookEvent) => void | Promise<void>;

export interface WebhookReceiverOptions {
  /** Shared secret expected in `X-Webhook-Secret`; empty or absent disables the check. */
  secret?: string;
  /** Verifies a payload signature over the raw body (`standardWebhooksSignature`, `githubSignature`). */
  signature?: SignatureVerifier;
  /** Path served, with every path beneath it. @defaultValue '/webhook' */
  path?: string;
  /**
   * Largest body read, from 1 byte to the spec's 1 MiB; past it 413 and no handler runs. Lower it
   * to what the handlers can hold: with `runBridge`, a run's state (SERVICE_MAX_STATE_BYTES) less
   * 64 KiB for the envelope, as the standalone receiver does. @defaultValue 1 MiB
   */
  maxBodyBytes?: number;
  /**
   * Where the ids of handled deliveries are remembered, when the signature scheme names them
   * (Standard Webhooks' `webhook-id`, GitHub's `X-GitHub-Delivery`): a delivery seen again
   * within its replay window is answered 200 without running a handler. Share a Redis one
   * between receivers. @defaultValue one in this process's memory
   */
  deduplicator?: Deduplicator;
  /** @defaultValue a silent logger */
  logger?: Logger;
}

/** The type whose handlers run for every delivery, after the type-specific ones. */
export const WILDCARD = '*';

/**
 * The inbound webhook receiver (the README's *Webhooks and chat adapters*):
 * POST only (405), shared secret compared in constant time and optional signature (401),
 * body up to `maxBodyBytes` (413 beyond, no handler called), JSON only (400). Handlers run one
 * after the other in registration order, type-specific before wildcard, all of them even when
 * one fails: 200 `{status:"ok",handled}`, 500 `{status:"error",errors:[<code>, …]}`, 413
 * with the error body when every failure was `payload_too_large`, or 429 with the error body and
 * Retry-After when every failure was `rate_limited` (a full queue). A signed delivery already
 * handled is answered 200 `{status:"ok",handled:0,duplicate:true}`.
 */
export class WebhookReceiver {
  private readonly handlers = new Map<string, WebhookHandler[]>();
  private readonly deliveries: InFlight;
  private readonly logger: Logger;
  private readonly endpoint: Middleware;
  private readonly deduplicator: Deduplicator;
  private server: ListeningServer | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: WebhookReceiverOptions = {}) {
    this.logger = options.logger ?? silentLogger();
    this.deduplicator = options.deduplicator ?? new MemoryDeduplicator();
    this.endpoint = postEndpoint({
      path: options.path ?? '/webhook',
      subpaths: true,
      name: 'webhook receiver',
      stopped: () => this.closing !== undefined,
      authorize: (ctx) => this.checkSecret(ctx),
      maxBodyBytes: options.maxBodyBytes,
      signature: options.signature,
      handle: (ctx, body, check) => this.deliver(ctx, body, check),
    });
    this.deliveries = new InFlight((error) => this.logger.error({ err: error }, 'webhook delivery failed'));
  }

  /** Registers a handler for an event type, or for every event with `*`; several per type may run. */
  on(type: string, handler: WebhookHandler): this {
    if (type === '') throw new TypeError('A webhook event type must not be empty');
    const list = this.handlers.get(type) ?? [];
    list.push(handler);
    this.handlers.set(type, list);
    return this;
  }

  /** Koa middleware serving the path and every path beneath it; other paths go to `next`. */
  middleware(): Middleware {
    return this.endpoint;
  }

  /** Serves the receiver alone on `address`, for a process that has no Koa app of its own. */
  async listen(address: ListenAddress): Promise<ListeningServer> {
    if (this.server) throw new Error('The webhook receiver is already listening');
    this.server = await serveMiddleware(this.endpoint, address);
    return this.server;
  }

  /** Refuses new deliveries (503), waits for running ones and closes the server; idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.server?.close();
      await this.deliveries.drain();
    })();
    return this.closing;
  }

  private checkSecret(ctx: Context): void {
    const secret = this.options.secret ?? '';
    if (secret !== '' && !constantTimeEqual(ctx.get('X-Webhook-Secret'), secret)) {
      throw unauthorized('The X-Webhook-Secret header is missing or wrong.');
    }
  }

  private async deliver(ctx: Context, body: Buffer, check: SignatureCheck | undefined): Promise<void> {
    const headers = flattenHeaders(ctx.req.headers);
    const event: WebhookEvent = {
      source: ctx.get('X-Event-Source'),
      type: ctx.get('X-Event-Type') || 'generic',
      body,
      payload: parseJsonBody(body),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
    const delivery = check?.ok ? check.delivery : undefined;
    if (delivery && !(await this.deduplicator.claim(delivery.id, delivery.replayWindowMs))) {
      this.logger.info({ delivery: delivery.id, type: event.type, requestId: ctx.state.requestId }, 'webhook delivery already handled');
      ctx.body = { status: 'ok', handled: 0, duplicate: true };
      return;
    }
    const handlers = [...(this.handlers.get(event.type) ?? []), ...(event.type === WILDCARD ? [] : this.handlers.get(WILDCARD) ?? [])];
    let failures: unknown[] = [];
    // Tracing on: the delivery is a span continuing the sender's traceparent; the runs it starts sit under it.
    const attributes = { 'agentplane.webhook.type': event.type, 'agentplane.webhook.source': event.source };
    await inEntrySpan(`webhook ${event.type}`, { headers: ctx.req.headers }, attributes, (span) =>
      this.deliveries.run(async () => {
        failures = await this.runHandlers(handlers, event, ctx.state.requestId as string | undefined);
        if (failures.length > 0) span?.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', codeOf(failures[0]));
      }),
    );
    const errors = failures.map(codeOf);
    // A failed delivery is not remembered: the sender's retry must run.
    if (delivery && errors.length > 0) await this.deduplicator.release(delivery.id).catch(() => undefined);
    // A delivery too large for its run fails the same way on every redelivery: 413 tells the
    // sender not to retry, as a body over the limit does. Any other failure may pass: 500.
    if (errors.length > 0 && errors.every((code) => code === 'payload_too_large')) {
      throw new AppError('payload_too_large', "The delivery is too large for what its handlers keep (a run's state: SERVICE_MAX_STATE_BYTES).");
    }
    // A full queue (the tenant's queued cap) refused every start: 429 with its Retry-After and
    // the error body, as POST /api/runs answers; the sender retries later, nothing was stored.
    if (errors.length > 0 && errors.every((code) => code === 'rate_limited')) throw failures[0];
    ctx.status = errors.length === 0 ? 200 : 500;
    ctx.body = errors.length === 0 ? { status: 'ok', handled: handlers.length } : { status: 'error', errors };
  }

  /** Runs every handler; answers what each failed one threw, in order. */
  private async runHandlers(handlers: WebhookHandler[], event: WebhookEvent, requestId: string | undefined): Promise<unknown[]> {
    const failures: unknown[] = [];
    for (const handler of handlers) {
      try {
        await handler(event);
      } catch (error) {
        const code = codeOf(error);
        this.logger.error({ err: error, code, type: event.type, source: event.source, requestId }, 'webhook handler failed');
        failures.push(error);
      }
    }
    return failures;
  }
}

/** A handler's failure as the answer lists it: an agentplane error's code, else `internal`. */
function codeOf(error: unknown): string {
  return isAppError(error) ? error.code : 'internal';
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
