import { splitErrorClass } from '../domain/error-class.js';
import { AppError } from '../domain/errors.js';
import { ACTIVE_RUN_STATUSES, END_NODE, TIMEOUT_ERROR, type Approval, type JsonObject, type Principal, type Run } from '../domain/types.js';
import type { LangGraphDeps } from './deps.js';
import { cancelQuietly } from './run-rollback.js';
import type { RunCreate } from './types.js';
import { isGraphAgent } from '../runtime/agent.js';

/**
 * What the waits, joins and streams of a LangGraph run do once the run stopped, or once their
 * client left first: the answer (the thread's values, with `__interrupt__` when it paused or
 * `__error__` when it failed, as LangGraph's server answers them), the cancel of a run whose
 * client left, and the removal of a stateless run's thread.
 */

/** LangGraph's error shape (`{error, message}`), in `__error__` of a wait and in a stream's `error` event. */
export interface LangGraphError {
  error: string;
  message: string;
}

/**
 * Why the run ended badly, as LangGraph names it: failed (the class of what a graph threw, kept
 * in front of the run's error, else `Error`), or cancelled at its deadline; undefined otherwise.
 */
export function errorOf(run: Pick<Run, 'status' | 'error'>): LangGraphError | undefined {
  if (run.status === 'failed') return splitErrorClass(run.error ?? 'The run failed.');
  if (run.status === 'cancelled' && run.error === TIMEOUT_ERROR) return { error: 'TimeoutError', message: 'The run was cancelled at its deadline.' };
  return undefined;
}

/** A run as it stopped: with its state, and the approval it waits for when paused. */
export interface StoppedRun extends Pick<Run, 'status' | 'error' | 'agent_id' | 'session_id' | 'seq_num'> {
  state?: JsonObject;
  approval?: Pick<Approval, 'id' | 'prompt' | 'payload'>;
}

/**
 * The answer of a wait or join for a run as it stands: its state (a graph's values), plus
 * `__interrupt__` when paused (a graph's interrupts `{value, id}` from its thread state; a
 * native agent's request as `{value: payload or prompt, id: approval id}`; `[]` for a graph
 * that stopped before or after a node, `interrupt_before`/`interrupt_after`, as LangGraph's
 * last `values` chunk then says), or `{__error__}` when it failed or timed out.
 */
export async function valuesOf(deps: Pick<LangGraphDeps, 'agents' | 'graphs' | 'store'>, tenant: string, run: StoppedRun): Promise<JsonObject> {
  const failure = errorOf(run);
  if (failure) return { __error__: failure };
  const values = run.state ?? {};
  if (run.status === 'completed' && (await stoppedBeforeEnd(deps, tenant, run))) return { ...values, __interrupt__: [] };
  if (run.status !== 'interrupted') return values;
  return { ...values, __interrupt__: await interruptsOf(deps, tenant, run) };
}

/** Whether a graph run that completed stopped with nodes still planned: the checkpoint it stopped at is not the end. */
async function stoppedBeforeEnd(deps: Pick<LangGraphDeps, 'agents' | 'graphs' | 'store'>, tenant: string, run: StoppedRun): Promise<boolean> {
  if (run.seq_num === undefined || !isGraphAgent(deps.agents.get(run.agent_id)) || !deps.graphs) return false;
  const stopped = await deps.store.sessions.getCheckpoint(tenant, run.session_id, run.seq_num);
  return stopped !== null && stopped.node_id !== END_NODE;
}

async function interruptsOf(deps: Pick<LangGraphDeps, 'agents' | 'graphs'>, tenant: string, run: StoppedRun): Promise<unknown[]> {
  if (isGraphAgent(deps.agents.get(run.agent_id)) && deps.graphs) {
    const state = await deps.graphs.threadState(tenant, run.session_id, run.agent_id);
    const tasks = (state?.tasks ?? []) as { interrupts?: unknown[] }[];
    return tasks.flatMap((task) => task.interrupts ?? []);
  }
  const approval = run.approval;
  return approval ? [{ value: approval.payload ?? approval.prompt, id: approval.id }] : [];
}

/** The error of a run cancelled because the client that waited for or streamed it left (`on_disconnect: cancel`). */
const LEFT_ERROR = 'cancelled: its client disconnected (on_disconnect: cancel)';

type StopDeps = Pick<LangGraphDeps, 'store' | 'runs' | 'logger'>;
type DiscardDeps = StopDeps & Pick<LangGraphDeps, 'webhooks'>;

/** Cancels a run whose client left before it stopped (unless it ended already). */
export async function cancelLeft(deps: StopDeps, principal: Principal, runId: string): Promise<void> {
  await cancelQuietly(deps, principal, runId, LEFT_ERROR);
}

/** What a run creation does once the run stopped, or its client left first. */
export interface Afterwards {
  /** The run was started without a thread: removed with its new thread once it stops (`on_completion: delete`). */
  discard: boolean;
  /** Cancel the run when the client leaves before it stops. */
  cancelOnLeave: boolean;
}

export function afterwardsOf(body: Pick<RunCreate, 'on_completion' | 'on_disconnect'>, threadId: string | undefined): Afterwards {
  const discard = threadId === undefined && body.on_completion !== 'keep';
  // A run whose thread goes with it has no reader left once its client leaves.
  return { discard, cancelOnLeave: discard || body.on_disconnect === 'cancel' };
}

/**
 * Removes a stateless run's thread once its run stopped (a paused run is cancelled first), and
 * never before the run's webhook is queued: the delivery reads the run's input and state, which
 * go with the thread. A delivery that could not be queued keeps the thread (logged).
 */
export async function discardThread(deps: DiscardDeps, principal: Principal, sessionId: string): Promise<void> {
  const { tenant } = principal;
  try {
    const latest = await deps.store.runs.latestRun(tenant, sessionId);
    if (latest && ACTIVE_RUN_STATUSES.includes(latest.status)) await cancelQuietly(deps, principal, latest.id);
    if (latest) await deps.webhooks.queued(tenant, latest.id);
    await deps.store.sessions.deleteSession(tenant, sessionId);
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return;
    deps.logger.warn({ err: error, session_id: sessionId }, 'could not remove the thread of a stateless LangGraph run');
  }
}
