import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { approvalJson } from '../domain/approval-json.js';
import { AppError, isUnavailable } from '../domain/errors.js';
import { newId, nowIso } from '../domain/time.js';
import {
  clip,
  END_NODE,
  MAX_CUSTOM_EVENT_BYTES,
  APPROVAL_TIMEOUT_ACTIONS,
  errorMessage,
  MAX_APPROVAL_EXPIRY_MS,
  MAX_PROMPT_CHARS,
  type Checkpoint,
  type JsonObject,
  type Run,
  type Span,
} from '../domain/types.js';
import type { RunJob } from '../ports/run-queue.js';
import type { RunJournal } from '../ports/run-journal.js';
import type { Store } from '../ports/store.js';
import type { Agent, InterruptDecision, InterruptRequest, NodeContext, NodeSpec } from './agent.js';
import type { AgentRegistry } from './registry.js';
import type { EventBody, RunLifecycle } from './run-lifecycle.js';
import type { RunSignals } from './run-signals.js';

export interface ExecutorOptions {
  store: Pick<Store, 'sessions' | 'runs' | 'approvals'>;
  /** The run path: taking a run, recording each node (one round trip each on Redis). */
  journal: RunJournal;
  agents: AgentRegistry;
  lifecycle: RunLifecycle;
  signals: RunSignals;
  logger: Logger;
  /** Node executions per job before the run fails (a loop that never ends). @defaultValue 100 */
  stepLimit: number;
  /** @defaultValue Date.now */
  clock?: () => number;
}

/** Thrown inside a node by `ctx.interrupt` to pause the run; never escapes the executor. */
class InterruptSignal {
  constructor(
    readonly request: InterruptRequest,
    /** 1 for the node's first `ctx.interrupt` call, 2 for its second… */
    readonly index: number,
  ) {}
}

/** Executes one run job; resolves with the run as the job left it, or undefined when it did not run it. */
export type Execute = (job: RunJob) => Promise<Run | undefined>;

type Outcome =
  | { kind: 'ok'; patch: JsonObject; next: string; start: string }
  | { kind: 'interrupted'; signal: InterruptSignal; base: string; start: string }
  | { kind: 'error'; message: string; start: string }
  | { kind: 'cancelled'; start: string };

/**
 * The approval id of a node's `index`-th interrupt: `<run id>.<seq_num>` for the first (seq_num
 * of the checkpoint the node ran from), `<run id>.<seq_num>.<index>` for later ones.
 */
export function approvalIdOf(base: string, index: number): string {
  return index === 1 ? base : `${base}.${index}`;
}

/** The `<run id>.<seq_num>` an approval id starts with (run ids hold no dot). */
function approvalBase(approvalId: string): string {
  return approvalId.split('.').slice(0, 2).join('.');
}

/**
 * Executes run jobs: per node, event `node_start`, the node (tried again per its `retry`), the
 * checkpoint (seq_num + 1, node_id = the next node; written only while the run still runs),
 * the node's span, event `node_end`; the run's root span and end event when it ends. Runs are
 * at-least-once: a job for a run already ended is ignored, and a job re-delivered after a
 * crash continues from the latest checkpoint. Whatever goes wrong ends the run `failed` with
 * its error, except an infrastructure failure (Redis unreachable), which the queue retries.
 */
export function createExecutor(options: ExecutorOptions): Execute {
  const { store, journal, agents, lifecycle, signals, logger } = options;
  const clock = options.clock ?? Date.now;

  return async function execute(job: RunJob): Promise<Run | undefined> {
    const { tenant } = job;
    const agent = agents.get(job.agent_id);
    let run: Run;
    let latest: Checkpoint | undefined;
    try {
      // A re-delivered job (its worker died) finds the run still running and continues it.
      if (agent) {
        const begun = await journal.begin(tenant, { id: job.run_id, session_id: job.session_id, agent_id: job.agent_id });
        run = begun.run;
        latest = begun.checkpoint;
        if (begun.published) lifecycle.counted([begun.published]);
      } else {
        run = await store.runs.updateRun(tenant, job.run_id, { status: 'running', from: ['queued', 'running'] });
      }
    } catch (error) {
      if (error instanceof AppError && (error.code === 'conflict' || error.code === 'not_found')) return undefined;
      throw error;
    }
    const controller = signals.open(run.id);
    try {
      return await drive(job, run, agent, latest, controller.signal);
    } catch (error) {
      if (isUnavailable(error)) throw error;
      logger.error({ err: error, run_id: run.id }, 'run failed outside its nodes');
      return (await lifecycle.end(tenant, run.id, { status: 'failed', error: errorMessage(error), from: ['running'] })) ?? current(tenant, run.id);
    } finally {
      signals.release(run.id, controller);
    }
  };

  async function current(tenant: string, runId: string): Promise<Run | undefined> {
    return (await store.runs.getRun(tenant, runId)) ?? undefined;
  }

  async function drive(job: RunJob, run: Run, agent: Agent | undefined, latest: Checkpoint | undefined, signal: AbortSignal): Promise<Run | undefined> {
    const { tenant } = job;
    const publish = (body: EventBody) => lifecycle.publish(tenant, run, body);
    const fail = async (message: string) =>
      (await lifecycle.end(tenant, run.id, { status: 'failed', error: message, from: ['running'] })) ?? current(tenant, run.id);
    /** The run was cancelled while a node worked: its node span says so; the canceller ended the run. */
    const stopped = async (node: string, start: string) => {
      await store.sessions.addSpan(tenant, job.session_id, nodeSpan(run, node, start, 'cancelled'));
      return current(tenant, run.id);
    };

    if (!agent) return fail(`Agent "${job.agent_id}" is not registered on this worker.`);
    const first = latest ?? (await store.sessions.getCheckpoint(tenant, job.session_id));
    if (!first) return fail('The session has no checkpoint to run from.');
    let checkpoint: Checkpoint = first;
    // The first node of a resume replays the answers its interrupts already have (the session
    // may have been patched since, so the approvals are found from the job's, not the seq_num).
    let replayBase: string | undefined = job.approval_id ? approvalBase(job.approval_id) : `${run.id}.${first.seq_num}`;

    for (let steps = 0; checkpoint.node_id !== END_NODE; steps += 1) {
      if (signal.aborted) return current(tenant, run.id);
      if (steps >= options.stepLimit) return fail(`The run exceeded the step limit of ${options.stepLimit} nodes.`);
      const node = checkpoint.node_id;
      const base = replayBase ?? `${run.id}.${checkpoint.seq_num}`;
      const outcome = await runNode(agent, checkpoint, base, replayBase !== undefined);
      replayBase = undefined;
      if (outcome.kind === 'cancelled') return stopped(node, outcome.start);
      if (outcome.kind === 'interrupted') {
        const { request, index } = outcome.signal;
        const askedAt = clock();
        const expiresAt = request.expires_in_ms ? new Date(askedAt + request.expires_in_ms).toISOString() : undefined;
        let approvalId: string;
        try {
          const approval = await store.approvals.createApproval(tenant, {
            id: approvalIdOf(outcome.base, index),
            session_id: job.session_id,
            run_id: run.id,
            agent_id: job.agent_id,
            node_id: node,
            prompt: clip(request.prompt, MAX_PROMPT_CHARS),
            ...(request.payload === undefined ? {} : { payload: request.payload }),
            requested_at: new Date(askedAt).toISOString(),
            ...(expiresAt ? { expires_at: expiresAt, on_timeout: request.on_timeout ?? 'reject' } : {}),
          });
          approvalId = approval.id;
        } catch (error) {
          // The run was cancelled between the node and its request.
          if (error instanceof AppError && error.code === 'conflict') return stopped(node, outcome.start);
          throw error;
        }
        await store.sessions.addSpan(tenant, job.session_id, nodeSpan(run, node, outcome.start, 'interrupted'));
        await publish({ type: 'interrupted', node, approval_id: approvalId });
        const paused: Run = { ...run, status: 'interrupted', approval_id: approvalId };
        lifecycle.reached(tenant, paused);
        await lifecycle.settled(tenant, paused);
        return paused;
      }
      if (outcome.kind === 'error') {
        await store.sessions.addSpan(tenant, job.session_id, nodeSpan(run, node, outcome.start, 'error', outcome.message));
        await publish({ type: 'node_end', node, status: 'error' });
        return fail(outcome.message);
      }
      let step;
      try {
        // One step: the checkpoint (the patch alone, O(patch); only while this run still runs),
        // the span, node_end, then node_start of the next node or the run's completion.
        step = await journal.step(tenant, run, { ended: [{ node, span: nodeSpan(run, node, outcome.start, 'ok') }], patch: outcome.patch, next: outcome.next });
      } catch (error) {
        if (error instanceof AppError && error.code === 'conflict') return stopped(node, outcome.start);
        if (error instanceof AppError && (error.code === 'payload_too_large' || error.code === 'bad_request')) {
          await store.sessions.addSpan(tenant, job.session_id, nodeSpan(run, node, outcome.start, 'error', error.message));
          await publish({ type: 'node_end', node, status: 'error' });
          return fail(`Node "${node}": ${error.message}`);
        }
        throw error;
      }
      lifecycle.counted(step.published);
      if (step.completed) return lifecycle.completedByStep(tenant, step.completed, step.scheduled ?? true);
      checkpoint = { ...step.checkpoint, state: { ...checkpoint.state, ...outcome.patch } };
    }

    return lifecycle.complete(tenant, run);

    /** One node (its `node_start` went out with the step before): its attempts (per `retry`), each from the same checkpoint. */
    async function runNode(agent: Agent, at: Checkpoint, base: string, replay: boolean): Promise<Outcome> {
      const spec = agent.node(at.node_id);
      if (!spec) return { kind: 'error', message: `Node "${at.node_id}" does not exist in agent "${agent.id}".`, start: nowIso() };
      const answers = new Answers(store, tenant, base, replay);
      const attempts = spec.retry?.attempts ?? 1;
      for (let attempt = 1; ; attempt += 1) {
        const outcome = await attemptNode(agent, spec, at, answers, attempt);
        if (outcome.kind !== 'error' || attempt >= attempts) return outcome;
        await store.sessions.addSpan(tenant, job.session_id, nodeSpan(run, at.node_id, outcome.start, 'retry', outcome.message, { attempt }));
        try {
          await sleep((spec.retry?.backoffMs ?? 0) * 2 ** (attempt - 1), undefined, { signal });
        } catch {
          return { kind: 'cancelled', start: outcome.start };
        }
      }
    }

    async function attemptNode(agent: Agent, spec: Readonly<NodeSpec>, at: Checkpoint, answers: Answers, attempt: number): Promise<Outcome> {
      const start = nowIso();
      // A node with a time limit gets its own signal (the run's, or its timeout); others share the run's.
      const local = spec.timeoutMs ? new AbortController() : undefined;
      const nodeSignal = local ? AbortSignal.any([signal, local.signal]) : signal;
      let asked = 0;
      const ctx: NodeContext = {
        run_id: run.id,
        session_id: job.session_id,
        agent_id: job.agent_id,
        tenant,
        attempt,
        signal: nodeSignal,
        interrupt: async (request) => {
          checkInterrupt(request);
          asked += 1;
          const answer = await answers.get(asked);
          if (answer) return answer;
          throw new InterruptSignal(request, asked);
        },
        emit: async (name, data) => {
          if (typeof name !== 'string' || name.length < 1 || name.length > 128) throw new TypeError('ctx.emit: name must be a string of 1 to 128 characters.');
          const json = JSON.stringify(data ?? null);
          if (Buffer.byteLength(json) > MAX_CUSTOM_EVENT_BYTES) {
            throw new RangeError(`ctx.emit: data is larger than ${MAX_CUSTOM_EVENT_BYTES} bytes of JSON.`);
          }
          if (nodeSignal.aborted) return;
          await publish({ type: 'custom', node: at.node_id, name, data: JSON.parse(json) as unknown });
        },
      };
      try {
        const work = Promise.resolve().then(() => spec.run(structuredClone(at.state), ctx));
        // Without a time limit the node is awaited as it is (a cancel ends the run at once; the
        // node's return is then discarded); with one, it is given up on when its signal fires.
        const returned = local ? await bounded(work, nodeSignal, local, spec.timeoutMs!, at.node_id) : await work;
        if (signal.aborted) return { kind: 'cancelled', start };
        const patch = toPatch(returned, at.node_id);
        const next = agent.next(at.node_id, { ...at.state, ...patch });
        return { kind: 'ok', patch, next, start };
      } catch (error) {
        if (error instanceof InterruptSignal) return { kind: 'interrupted', signal: error, base: answers.base, start };
        if (signal.aborted) return { kind: 'cancelled', start };
        logger.warn({ err: error, run_id: run.id, node: at.node_id, attempt }, 'node failed');
        return { kind: 'error', message: errorMessage(error), start };
      } finally {
        local?.abort();
      }
    }
  }
}

/**
 * The node's promise, given up on when `signal` fires (the run was cancelled, or `timeoutMs`
 * passed and aborted `local`, which `signal` follows: the node's `ctx.signal` fires too).
 */
function bounded<T>(work: Promise<T>, signal: AbortSignal, local: AbortController, timeoutMs: number, node: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => local.abort(new Error(`Node "${node}" timed out after ${timeoutMs} ms.`)), timeoutMs);
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    });
  });
}

/** A node's return as a JSON patch: an object (or nothing), with nothing JSON cannot hold. */
function toPatch(returned: unknown, node: string): JsonObject {
  if (returned === undefined || returned === null) return {};
  if (typeof returned !== 'object' || Array.isArray(returned)) {
    throw new TypeError(`Node "${node}" returned ${Array.isArray(returned) ? 'an array' : typeof returned}; a node returns an object (a state patch) or nothing.`);
  }
  let json: string;
  try {
    json = JSON.stringify(returned);
  } catch (error) {
    throw new TypeError(`Node "${node}" returned a patch that is not JSON: ${(error as Error).message}`, { cause: error });
  }
  return JSON.parse(json) as JsonObject;
}

function checkInterrupt(request: InterruptRequest): void {
  if (typeof request?.prompt !== 'string') throw new TypeError('ctx.interrupt: prompt must be a string.');
  const { expires_in_ms: expires, on_timeout: onTimeout } = request;
  if (expires !== undefined && (!Number.isInteger(expires) || expires < 1 || expires > MAX_APPROVAL_EXPIRY_MS)) {
    throw new RangeError('ctx.interrupt: expires_in_ms must be an integer from 1 to 2592000000 (30 days).');
  }
  if (onTimeout !== undefined && !APPROVAL_TIMEOUT_ACTIONS.includes(onTimeout)) throw new RangeError('ctx.interrupt: on_timeout must be approve, reject or fail.');
  if (request.payload !== undefined) {
    try {
      approvalJson('payload', request.payload);
    } catch (error) {
      throw new RangeError(`ctx.interrupt: ${(error as Error).message}`, { cause: error });
    }
  }
}

/**
 * The answers a node's interrupts already have at one checkpoint, read on demand: the k-th
 * `ctx.interrupt` call returns the decision of approval k while one exists; the first call
 * without one pauses the run.
 */
class Answers {
  private readonly known = new Map<number, InterruptDecision>();

  constructor(
    private readonly store: Pick<Store, 'approvals'>,
    private readonly tenant: string,
    readonly base: string,
    private replaying: boolean,
  ) {}

  async get(index: number): Promise<InterruptDecision | undefined> {
    const cached = this.known.get(index);
    if (cached || !this.replaying) return cached;
    const approval = await this.store.approvals.getApproval(this.tenant, approvalIdOf(this.base, index));
    if (!approval || (approval.status !== 'approved' && approval.status !== 'rejected')) {
      this.replaying = false;
      return undefined;
    }
    const decision: InterruptDecision = { approved: approval.status === 'approved', comment: approval.comment ?? '' };
    if (approval.resume !== undefined) decision.resume = approval.resume;
    this.known.set(index, decision);
    return decision;
  }
}

function nodeSpan(run: Run, node: string, start: string, status: string, error?: string, extra: JsonObject = {}): Span {
  return {
    span_id: newId(),
    parent_id: run.id,
    name: node,
    start,
    end: nowIso(),
    attributes: { agent_id: run.agent_id, run_id: run.id, node_id: node, status, ...(error ? { error } : {}), ...extra },
  };
}
