import { context, trace, type Span as TraceSpan } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { tryExpected } from '../../domain/errors.js';
import { newId, nowIso } from '../../domain/time.js';
import {
  APPROVAL_TIMEOUT_ACTIONS,
  MAX_APPROVAL_EXPIRY_MS,
  type ApprovalTimeoutAction,
  type Checkpoint,
  type JsonObject,
  type Run,
  type RunJob,
  type Span,
} from '../../domain/types.js';
import { exportedIds, failSpan, tracer } from '../../observability/tracer.js';
import type { NodeStep, RunJournal, StepResult } from '../../ports/run-journal.js';
import type { Store } from '../../ports/store.js';
import type { EventBody, RunLifecycle } from '../run-lifecycle.js';

/** What every attempt of this process is built from (the driver's). */
export interface RunAttemptDeps {
  store: Pick<Store, 'sessions' | 'runs' | 'approvals'>;
  /** The run path: a step (checkpoint, spans, node events; the last completes the run) in one round trip on Redis. */
  journal: RunJournal;
  lifecycle: RunLifecycle;
  logger: Logger;
  clock: () => number;
}

/** One approval a pausing run asks for. */
export interface PauseRequest {
  /** The approval id (`<run id>.…`, the engine's scheme). */
  id: string;
  /** The node that asked. */
  node: string;
  /** What the approver is shown (clipped by the engine). */
  prompt: string;
  /** JSON shown with it; left out when undefined. */
  payload?: unknown;
  /** The request expires this long after it is made (validated by the engine). */
  expiresInMs?: number;
  /** What the system decides at expiry. @defaultValue reject */
  onTimeout?: ApprovalTimeoutAction;
  /** A span recorded once the approval exists (a native node's `interrupted` span). */
  span?: Span;
}

/** What recording a step came to: expected races are values, faults stay exceptions. */
export type StepOutcome =
  | { kind: 'recorded'; result: StepResult }
  /** The run no longer runs (it was cancelled): nothing was written. */
  | { kind: 'stopped' }
  /** The step would take the state past a limit: nothing was written. */
  | { kind: 'refused'; message: string };

/** What pausing came to: the paused run, or the run stopped on the way (cancelled before its approval). */
export type PauseOutcome = { kind: 'paused'; run: Run } | { kind: 'stopped' };

/** Whether `ms` is an approval lifetime the service accepts (1 ms to 30 days). */
export function isApprovalExpiry(ms: unknown): ms is number {
  return typeof ms === 'number' && Number.isInteger(ms) && ms >= 1 && ms <= MAX_APPROVAL_EXPIRY_MS;
}

/** Whether `action` is an `on_timeout` the service accepts. */
export function isTimeoutAction(action: unknown): action is ApprovalTimeoutAction {
  return typeof action === 'string' && (APPROVAL_TIMEOUT_ACTIONS as readonly string[]).includes(action);
}

/**
 * One attempt at a run, by one worker: the run it took (running), its abort signal (a cancel,
 * a deadline, a `multitask` interrupt), and what an engine records on the way: events, spans,
 * journal steps, a pause on a set of interrupts, a failure, a stop, the completion. Built by the
 * driver (src/runtime/run/run-driver.ts), handed to the agent kind's {@link RunEngine}.
 */
export class RunAttempt {
  constructor(
    private readonly deps: RunAttemptDeps,
    readonly job: RunJob,
    readonly run: Run,
    /** Fires when the run is stopped (cancel, deadline, multitask interrupt). */
    readonly signal: AbortSignal,
    /** The session's latest checkpoint, when taking the run read it (cheaply) already. */
    readonly checkpoint?: Checkpoint,
  ) {}

  get tenant(): string {
    return this.job.tenant;
  }

  get store(): RunAttemptDeps['store'] {
    return this.deps.store;
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  /** Now, by the attempt's clock (ms). */
  now(): number {
    return this.deps.clock();
  }

  /** Publishes an event of the run. */
  publish(body: EventBody): Promise<void> {
    return this.deps.lifecycle.publish(this.tenant, this.run, body);
  }

  /**
   * The span of a node of the run, from `start` to `end`, with its status (and error, and more
   * attributes). Given the node's OpenTelemetry span (`traced`, from {@link startTrace}), ends
   * it with that status and carries the ids it is exported under.
   */
  span(
    node: string,
    start: string,
    status: string,
    more: { error?: string | undefined; attributes?: JsonObject; end?: string; traced?: TraceSpan | undefined } = {},
  ): Span {
    const { run } = this;
    const end = more.end ?? nowIso();
    const { traced } = more;
    if (traced) {
      traced.setAttribute('agentplane.node.status', status);
      if (status === 'error') failSpan(traced, more.error ?? 'error', 'node_error');
      traced.end(new Date(end));
    }
    return {
      span_id: newId(),
      parent_id: run.id,
      name: node,
      start,
      end,
      attributes: { agent_id: run.agent_id, run_id: run.id, node_id: node, status, ...(more.error ? { error: more.error } : {}), ...more.attributes },
      ...exportedIds(traced),
    };
  }

  /**
   * Starts the OpenTelemetry span of a node (`name`: `node <id>`, `task <name>`) under the
   * attempt's, or under `parent`; undefined when tracing is off. {@link span} ends it.
   */
  startTrace(name: string, node: string, options: { parent?: TraceSpan | undefined; startMs?: number } = {}): TraceSpan | undefined {
    const traces = tracer();
    if (!traces) return undefined;
    const parent = options.parent ? trace.setSpan(context.active(), options.parent) : context.active();
    const attributes = { 'agentplane.run.id': this.run.id, 'agentplane.node.id': node };
    return traces.startSpan(name, { attributes, ...(options.startMs === undefined ? {} : { startTime: options.startMs }) }, parent);
  }

  /** Runs `fn` with `traced` as the active span (model calls and logs inside it nest there); just `fn` when tracing is off. */
  inTrace<T>(traced: TraceSpan | undefined, fn: () => Promise<T>): Promise<T> {
    return traced ? context.with(trace.setSpan(context.active(), traced), fn) : fn();
  }

  /** Records a span on the run's session. */
  addSpan(span: Span): Promise<void> {
    return this.deps.store.sessions.addSpan(this.tenant, this.job.session_id, span);
  }

  /** Records a step: its checkpoint, the spans and `node_end` of the nodes that returned, then `node_start`s or the completion. */
  async step(step: NodeStep): Promise<StepOutcome> {
    const tried = await tryExpected(this.deps.journal.step(this.tenant, this.run, step), 'conflict', 'payload_too_large', 'bad_request');
    if (!tried.ok) return tried.error.code === 'conflict' ? { kind: 'stopped' } : { kind: 'refused', message: tried.error.message };
    this.deps.lifecycle.counted(tried.value.published);
    return { kind: 'recorded', result: tried.value };
  }

  /** The run as a completing step left it (its metrics, schedule and queue settled). */
  completedBy(result: StepResult & { completed: NonNullable<StepResult['completed']> }): Promise<Run> {
    return this.deps.lifecycle.completedByStep(this.tenant, result.completed, result.scheduled ?? true);
  }

  /** Completes the run without a completing step (the engine reached the end otherwise). */
  complete(): Promise<Run | undefined> {
    return this.deps.lifecycle.complete(this.tenant, this.run);
  }

  /** Ends the run `failed` with `message` (when it still runs); resolves with the run as it is. */
  async fail(message: string): Promise<Run | undefined> {
    return (await this.deps.lifecycle.end(this.tenant, this.run.id, { status: 'failed', error: message, from: ['running'] })) ?? this.current();
  }

  /**
   * The run was stopped (whoever stopped it ended it): records the spans given, resolves with
   * the run as it is. A run that is gone (deleted, or lost with the backend's data) leaves
   * nothing behind: no span is written for a session that no longer exists.
   */
  async stopped(...spans: Span[]): Promise<Run | undefined> {
    const run = await this.current();
    if (!run) return undefined;
    for (const span of spans) await this.addSpan(span);
    return run;
  }

  /** The run as stored now. */
  async current(): Promise<Run | undefined> {
    return (await this.deps.store.runs.getRun(this.tenant, this.run.id)) ?? undefined;
  }

  /**
   * Pauses the run on `requests` (at least one): one pending approval each (its span, if any,
   * then its `interrupted` event), then the run is `interrupted` on the last one. A run stopped
   * before an approval was stored comes back `stopped`.
   */
  async pause(requests: readonly PauseRequest[]): Promise<PauseOutcome> {
    const { store, lifecycle } = this.deps;
    let paused: Run | undefined;
    for (const request of requests) {
      const askedAt = this.now();
      const created = await tryExpected(
        store.approvals.createApproval(this.tenant, {
          id: request.id,
          session_id: this.job.session_id,
          run_id: this.run.id,
          agent_id: this.job.agent_id,
          node_id: request.node,
          prompt: request.prompt,
          ...(request.payload === undefined ? {} : { payload: request.payload }),
          requested_at: new Date(askedAt).toISOString(),
          ...(request.expiresInMs
            ? { expires_at: new Date(askedAt + request.expiresInMs).toISOString(), on_timeout: request.onTimeout ?? 'reject' }
            : {}),
        }),
        'conflict',
      );
      // The run was cancelled between the interrupt and its request.
      if (!created.ok) return { kind: 'stopped' };
      const approvalId = created.value.id;
      if (tracer()) trace.getActiveSpan()?.addEvent('agentplane.interrupted', { 'agentplane.node.id': request.node, 'agentplane.approval.id': approvalId });
      // Sent together, in this order (one connection keeps it): the span is stored before the event tells of it.
      await Promise.all([request.span ? this.addSpan(request.span) : undefined, this.publish({ type: 'interrupted', node: request.node, approval_id: approvalId })]);
      paused = { ...this.run, status: 'interrupted', approval_id: approvalId };
    }
    if (!paused) throw new Error('A run pauses on at least one request.');
    lifecycle.reached(this.tenant, paused);
    await lifecycle.settled(this.tenant, paused);
    return { kind: 'paused', run: paused };
  }
}
