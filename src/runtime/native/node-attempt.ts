import { setTimeout as sleep } from 'node:timers/promises';
import { approvalJson } from '../../domain/approval-json.js';
import { nowIso } from '../../domain/time.js';
import { errorMessage, MAX_CUSTOM_EVENT_BYTES, type Checkpoint, type JsonObject } from '../../domain/types.js';
import { LangChainSpans } from '../../observability/langchain-spans.js';
import type { Store } from '../../ports/store.js';
import type { InterruptDecision, InterruptRequest, NativeAgent, NodeContext, NodeSpec } from '../agent.js';
import { isApprovalExpiry, isTimeoutAction, type RunAttempt } from '../run/run-attempt.js';

/** Thrown inside a node by `ctx.interrupt` to pause the run; never escapes the engine. */
export class InterruptSignal {
  constructor(
    readonly request: InterruptRequest,
    /** 1 for the node's first `ctx.interrupt` call, 2 for its second… */
    readonly index: number,
  ) {}
}

/** What one node came to. */
export type Outcome =
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

/**
 * One node of a native agent (its `node_start` went out with the step before): its attempts
 * (per `retry`), each from the same checkpoint, each given `ctx` (interrupt, emit, signal,
 * the LangChain callbacks tracing its model calls).
 */
export async function runNode(attempt: RunAttempt, agent: NativeAgent, at: Checkpoint, base: string, replay: boolean): Promise<Outcome> {
  const spec = agent.node(at.node_id);
  if (!spec) return { kind: 'error', message: `Node "${at.node_id}" does not exist in agent "${agent.id}".`, start: nowIso() };
  const answers = new Answers(attempt.store, attempt.tenant, base, replay);
  const attempts = spec.retry?.attempts ?? 1;
  for (let tried = 1; ; tried += 1) {
    const outcome = await attemptNode(attempt, agent, spec, at, answers, tried);
    if (outcome.kind !== 'error' || tried >= attempts) return outcome;
    await attempt.addSpan(attempt.span(at.node_id, outcome.start, 'retry', { error: outcome.message, attributes: { attempt: tried } }));
    try {
      await sleep((spec.retry?.backoffMs ?? 0) * 2 ** (tried - 1), undefined, { signal: attempt.signal });
    } catch {
      return { kind: 'cancelled', start: outcome.start };
    }
  }
}

async function attemptNode(
  attempt: RunAttempt,
  agent: NativeAgent,
  spec: Readonly<NodeSpec>,
  at: Checkpoint,
  answers: Answers,
  tried: number,
): Promise<Outcome> {
  const { run, job, signal } = attempt;
  const start = nowIso();
  // A node with a time limit gets its own signal (the run's, or its timeout); others share the run's.
  const local = spec.timeoutMs ? new AbortController() : undefined;
  const nodeSignal = local ? AbortSignal.any([signal, local.signal]) : signal;
  let asked = 0;
  // Tracing on: the node's model and tool calls nest under its span (the active one, see engine.ts).
  const spans = LangChainSpans.underActiveSpan();
  const ctx: NodeContext = {
    run_id: run.id,
    session_id: job.session_id,
    agent_id: job.agent_id,
    tenant: job.tenant,
    attempt: tried,
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
      await attempt.publish({ type: 'custom', node: at.node_id, name, data: JSON.parse(json) as unknown });
    },
    callbacks: spans ? [spans] : [],
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
    attempt.logger.warn({ err: error, run_id: run.id, node: at.node_id, attempt: tried }, 'node failed');
    return { kind: 'error', message: errorMessage(error), start };
  } finally {
    local?.abort();
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
  if (expires !== undefined && !isApprovalExpiry(expires)) {
    throw new RangeError('ctx.interrupt: expires_in_ms must be an integer from 1 to 2592000000 (30 days).');
  }
  if (onTimeout !== undefined && !isTimeoutAction(onTimeout)) throw new RangeError('ctx.interrupt: on_timeout must be approve, reject or fail.');
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
