import { AppError, badRequest, notFound } from '../domain/errors.js';
import { jsonContains } from '../domain/json-contains.js';
import { END_NODE, type Approval, type Checkpoint, type JsonObject, type Session } from '../domain/types.js';
import type { LangGraphDeps } from './deps.js';
import { isGraphAgent } from '../runtime/agent.js';

/**
 * A LangGraph thread's state (`ThreadState`) over an agentplane session. A graph agent's
 * session is read and edited through the LangGraph engine (its checkpoints, tasks and
 * interrupts as LangGraph's server shows them). A native (defineAgent) session shows its
 * checkpoints in the same shape: a checkpoint id is the checkpoint's seq_num, `next` its node,
 * and the task of the latest carries the run's pending approval or failure.
 */

export type ThreadStateDeps = Pick<LangGraphDeps, 'store' | 'graphs' | 'agents' | 'config'>;

/** The session of a thread; `not_found` (the thread) when the tenant has none of that id. */
export async function threadSession(deps: Pick<LangGraphDeps, 'store'>, tenant: string, threadId: string): Promise<Session> {
  const session = await deps.store.sessions.getSession(tenant, threadId);
  if (!session) throw notFound(`Thread "${threadId}"`);
  return session;
}

/** The state of a thread nothing has written yet, as LangGraph's server answers it. */
export const EMPTY_THREAD_STATE: JsonObject = Object.freeze({
  values: {},
  next: [],
  tasks: [],
  metadata: {},
  created_at: null,
  checkpoint: null,
  parent_checkpoint: null,
});

/**
 * The graph agent whose graph holds a thread's state: the agent its runs are bound to, or the
 * `graph_id` its metadata names before its first run; undefined for a native agent's thread,
 * a thread naming no graph, or without the LangGraph engine.
 */
export function graphAgentOf(deps: Pick<LangGraphDeps, 'agents' | 'graphs'>, session: Pick<Session, 'agent_id' | 'metadata'>): string | undefined {
  const agent = deps.agents.get(agentNamed(session));
  return isGraphAgent(agent) && deps.graphs ? agent.id : undefined;
}

/** The agent id a thread belongs to: its runs', else its metadata's `graph_id` ('' for none). */
function agentNamed(session: Pick<Session, 'agent_id' | 'metadata'>): string {
  if (session.agent_id !== '') return session.agent_id;
  return typeof session.metadata.graph_id === 'string' ? session.metadata.graph_id : '';
}

/**
 * A thread's interrupts as LangGraph's server shows them: by task id, every pending task's
 * (`[]` for a task a static `interrupt_before`/`interrupt_after` stopped before, or one that
 * raised none beside another that did).
 */
export function interruptsOf(state: JsonObject): Record<string, unknown[]> {
  const tasks = (state.tasks ?? []) as { id: string; interrupts?: unknown[] }[];
  return Object.fromEntries(tasks.filter((task) => Array.isArray(task.interrupts)).map((task) => [task.id, task.interrupts!]));
}

/** The task id of a native session's next node at a checkpoint. */
export function nativeTaskId(checkpoint: Pick<Checkpoint, 'seq_num'>, node: string): string {
  return `${checkpoint.seq_num}:${node}`;
}

/** A native approval as a LangGraph interrupt: its id, and its JSON payload (else its prompt) as the value. */
export function nativeInterrupt(approval: Approval): JsonObject {
  return { id: approval.id, value: approval.payload !== undefined ? approval.payload : approval.prompt };
}

/** What a read is asked: the latest state or a checkpoint's, with subgraph states. */
export interface ThreadStateRead {
  checkpointId?: string;
  /** A graph thread's version in storage, its read started already ({@link GraphThreads.readVersion}). */
  version?: Promise<string>;
  /** A subgraph's namespace (a task's `checkpoint_ns`): its state, not the root graph's. */
  checkpointNs?: string;
  subgraphs?: boolean;
}

/** The thread's state (at `checkpointId`); `not_found` for a checkpoint it does not hold. */
export async function readThreadState(deps: ThreadStateDeps, tenant: string, session: Session, read: ThreadStateRead = {}): Promise<JsonObject> {
  const graphId = graphAgentOf(deps, session);
  if (graphId) {
    const state = await deps.graphs!.threadState(tenant, session.id, graphId, read);
    if (state) return state;
  } else {
    nativeRoot(read.checkpointNs);
    const seq = read.checkpointId === undefined ? undefined : nativeSeq(read.checkpointId);
    const latest = await deps.store.sessions.getCheckpoint(tenant, session.id);
    const checkpoint = seq === undefined || seq === latest?.seq_num ? latest : await deps.store.sessions.getCheckpoint(tenant, session.id, seq);
    if (checkpoint) return nativeState(session.id, checkpoint, checkpoint === latest ? await pauseOf(deps, tenant, session.id) : {});
  }
  if (read.checkpointId !== undefined) throw notFound(`Checkpoint "${read.checkpointId}" of thread "${session.id}"`);
  if (read.checkpointNs) throw notFound(`Subgraph "${read.checkpointNs}" of thread "${session.id}"`);
  return EMPTY_THREAD_STATE;
}

/**
 * The thread's latest state as JSON text ({@link readThreadState} of no checkpoint, no
 * subgraphs): a graph thread's as kept while its checkpoints are unchanged, sent as it is.
 */
export async function readLatestThreadStateText(deps: ThreadStateDeps, tenant: string, session: Session, version?: Promise<string>): Promise<string> {
  const graphId = graphAgentOf(deps, session);
  const text = graphId ? await deps.graphs!.latestStateText(tenant, session.id, graphId, version) : null;
  return text ?? JSON.stringify(await readThreadState(deps, tenant, session));
}

/** Which states of a thread's history: newest first, at most `limit`, older than `before`, matching `metadata`. */
export interface ThreadHistoryRead {
  limit: number;
  before?: string;
  checkpointId?: string;
  checkpointNs?: string;
  metadata?: JsonObject;
}

/** The thread's past states, newest first. */
export async function readThreadHistory(deps: ThreadStateDeps, tenant: string, session: Session, read: ThreadHistoryRead): Promise<JsonObject[]> {
  const graphId = graphAgentOf(deps, session);
  if (graphId) return deps.graphs!.threadHistory(tenant, session.id, graphId, read);
  nativeRoot(read.checkpointNs);
  if (read.checkpointId !== undefined) {
    const state = await readThreadState(deps, tenant, session, { checkpointId: read.checkpointId }).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'not_found') return undefined;
      throw error;
    });
    return state && (read.metadata === undefined || jsonContains(state.metadata, read.metadata)) ? [state] : [];
  }
  const latest = await deps.store.sessions.getCheckpoint(tenant, session.id);
  if (!latest) return [];
  const offset = read.before === undefined ? 0 : Math.max(0, latest.seq_num - nativeSeq(read.before) + 1);
  const page = await deps.store.sessions.listCheckpoints(tenant, session.id, { limit: read.limit, offset, maxBytes: deps.config.SERVICE_MAX_PAGE_BYTES });
  const pause = await pauseOf(deps, tenant, session.id);
  return page.checkpoints
    .map((checkpoint) => nativeState(session.id, checkpoint, checkpoint.seq_num === latest.seq_num ? pause : {}))
    .filter((state) => read.metadata === undefined || jsonContains(state.metadata, read.metadata));
}

/** A state update: LangGraph's `values`, `as_node`, and the checkpoint to update from. */
export interface ThreadStateUpdate {
  values: JsonObject;
  asNode?: string;
  checkpointId?: string;
  checkpointNs?: string;
}

/**
 * Updates the thread's state and answers the new checkpoint (`{ thread_id, checkpoint_ns,
 * checkpoint_id, ... }`). A graph's goes through the graph (its reducers, `as_node`, a fork from
 * `checkpointId`); a native session's values are shallow-merged into its latest state.
 * `conflict` while a run of the thread is queued or running.
 */
export async function updateThreadState(deps: ThreadStateDeps, tenant: string, session: Session, update: ThreadStateUpdate): Promise<JsonObject> {
  const run = await deps.store.runs.latestRun(tenant, session.id);
  if (run?.status === 'queued' || run?.status === 'running') throw new AppError('conflict', `Thread "${session.id}" is busy: a run of it is ${run.status}.`);
  const graphId = graphAgentOf(deps, session);
  if (graphId) {
    // An update from a checkpoint the thread does not hold would start a new history (a reset): 404, nothing written.
    const at = { checkpointId: update.checkpointId, checkpointNs: update.checkpointNs || undefined };
    if ((at.checkpointId !== undefined || at.checkpointNs !== undefined) && !(await deps.graphs!.threadState(tenant, session.id, graphId, at))) {
      throw notFound(at.checkpointNs ? `Subgraph "${at.checkpointNs}" of thread "${session.id}"` : `Checkpoint "${update.checkpointId}" of thread "${session.id}"`);
    }
    await deps.graphs!.updateState(tenant, session.id, update.values, { agentId: graphId, asNode: update.asNode, ...at });
    // A subgraph's edit answers the subgraph's new checkpoint.
    const state = await deps.graphs!.threadState(tenant, session.id, graphId, at.checkpointNs ? { checkpointNs: at.checkpointNs } : {});
    return { checkpoint: state?.checkpoint ?? null };
  }
  const agent = deps.agents.get(agentNamed(session));
  if (!agent) throw badRequest(`Thread "${session.id}" has no graph yet: create it with a graph_id (metadata.graph_id) or run it first.`);
  if (update.asNode !== undefined) throw badRequest(`as_node applies to graph agents; "${agent.id}" is a native agent.`);
  if (update.checkpointId !== undefined) throw badRequest(`A native agent's thread is updated at its latest checkpoint only ("${agent.id}" is one).`);
  nativeRoot(update.checkpointNs);
  const latest = await deps.store.sessions.getCheckpoint(tenant, session.id);
  const written = await deps.store.sessions.appendCheckpoint(tenant, session.id, {
    patch: update.values,
    ...(latest ? { ifSeq: latest.seq_num } : { node_id: agent.entry }),
    rejectWhileRunning: true,
  });
  return { checkpoint: nativeRef(session.id, written.seq_num) };
}

/** A native agent has no subgraphs: a namespace other than the root's ("") is `bad_request`. */
function nativeRoot(checkpointNs: string | undefined): void {
  if (checkpointNs) throw badRequest(`checkpoint_ns: a native agent's thread has no subgraphs ("${checkpointNs}").`);
}

/** The seq_num a native thread's checkpoint id names; `bad_request` for anything else. */
function nativeSeq(checkpointId: string): number {
  if (!/^[1-9]\d{0,14}$/.test(checkpointId)) throw badRequest(`A native agent's checkpoint ids are its seq_nums; "${checkpointId}" is not one.`);
  return Number(checkpointId);
}

function nativeRef(sessionId: string, seq: number): JsonObject {
  return { thread_id: sessionId, checkpoint_ns: '', checkpoint_id: String(seq), checkpoint_map: null };
}

/** Why a native run stopped: the approval it waits on, or its failure. */
interface Pause {
  approval?: Approval;
  error?: string;
}

/** Why the latest run stopped (shown on the latest checkpoint's task, an edit during a pause included). */
async function pauseOf(deps: ThreadStateDeps, tenant: string, sessionId: string): Promise<Pause> {
  const run = await deps.store.runs.latestRun(tenant, sessionId);
  if (!run) return {};
  if (run.status === 'failed') return { error: run.error ?? 'failed' };
  if (run.status !== 'interrupted' || !run.approval_id) return {};
  const approval = await deps.store.approvals.getApproval(tenant, run.approval_id);
  return approval?.status === 'pending' ? { approval } : {};
}

function nativeState(sessionId: string, checkpoint: Checkpoint, pause: Pause): JsonObject {
  const next = checkpoint.node_id === END_NODE ? [] : [checkpoint.node_id];
  return {
    values: checkpoint.state,
    next,
    tasks: next.map((node) => ({
      id: nativeTaskId(checkpoint, node),
      name: node,
      error: pause.error ?? null,
      interrupts: pause.approval?.node_id === node ? [nativeInterrupt(pause.approval)] : [],
      path: null,
      checkpoint: null,
      state: null,
      result: null,
    })),
    metadata: { step: checkpoint.seq_num, seq_num: checkpoint.seq_num, node_id: checkpoint.node_id },
    created_at: checkpoint.created_at,
    checkpoint: nativeRef(sessionId, checkpoint.seq_num),
    parent_checkpoint: checkpoint.seq_num > 1 ? nativeRef(sessionId, checkpoint.seq_num - 1) : null,
  };
}
