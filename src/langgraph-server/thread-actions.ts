import { randomUUID } from 'node:crypto';
import { AppError, badRequest, conflict, notFound } from '../domain/errors.js';
import { ACTIVE_RUN_STATUSES, MAX_QUEUED_BEHIND, type JsonObject, type Session } from '../domain/types.js';
import { isGraphAgent } from '../runtime/agent.js';
import type { GraphSuperstep } from '../ports/graph-threads.js';
import type { LangGraphDeps } from './deps.js';
import { graphAgentOf, threadSession } from './thread-state.js';
import { ThreadFacts, threadMetadata, type Thread } from './thread-facts.js';

/** Creating, reading, changing, deleting and copying a LangGraph thread (an agentplane session). */

export type ThreadDeps = Pick<LangGraphDeps, 'store' | 'graphs' | 'agents' | 'config' | 'runs' | 'logger'>;

/** Deleting a thread cancels its active runs and tries again this many times when a run became active meanwhile. */
const DELETE_ATTEMPTS = 3;

/** A `graph_id` in a thread's metadata names a registered agent (the graph its state and runs use). */
function checkGraphId(deps: Pick<LangGraphDeps, 'agents'>, metadata: JsonObject | undefined): void {
  const graphId = metadata?.graph_id;
  if (graphId === undefined || graphId === null) return;
  if (typeof graphId !== 'string' || !deps.agents.get(graphId)) {
    throw new AppError('unknown_agent', `metadata.graph_id: Agent ${JSON.stringify(graphId)} is not registered.`);
  }
}

const threadOf = (deps: ThreadDeps, tenant: string, session: Session) => new ThreadFacts(deps, tenant, session).thread();

export interface ThreadCreate {
  thread_id?: string | undefined;
  metadata?: JsonObject | undefined;
  /** When the thread exists: `raise` (409) or answer it unchanged. */
  if_exists: 'raise' | 'do_nothing';
  /** A new thread's history, written as LangGraph's bulkUpdateState does (it needs `metadata.graph_id`, a graph). */
  supersteps?: readonly GraphSuperstep[] | undefined;
}

/** Creates a thread: a session before its first run (a UUID when no id is given). */
export async function createThread(deps: ThreadDeps, tenant: string, create: ThreadCreate): Promise<Thread> {
  checkGraphId(deps, create.metadata);
  const graphAgent = create.supersteps?.length ? supersteppedGraph(deps, create.metadata) : undefined;
  const sessionId = create.thread_id ?? randomUUID();
  let session: Session;
  try {
    session = await deps.store.sessions.createSession(tenant, { session_id: sessionId, metadata: create.metadata ?? {} });
  } catch (error) {
    const existing = error instanceof AppError && error.code === 'conflict' ? await deps.store.sessions.getSession(tenant, sessionId) : null;
    if (!existing) throw error;
    if (create.if_exists === 'raise') throw conflict(`Thread "${sessionId}" already exists.`);
    // An existing thread keeps its history: the supersteps are for a new one.
    return threadOf(deps, tenant, existing);
  }
  if (graphAgent && create.supersteps) {
    try {
      await deps.graphs!.bulkUpdate(tenant, sessionId, graphAgent, create.supersteps);
    } catch (error) {
      // Refused: the thread is not left half made.
      await deps.store.sessions.deleteSession(tenant, sessionId).catch(() => undefined);
      throw error;
    }
    session = (await deps.store.sessions.getSession(tenant, sessionId)) ?? session;
  }
  return threadOf(deps, tenant, session);
}

/** The graph a thread created with supersteps names (`metadata.graph_id`), else `bad_request`. */
function supersteppedGraph(deps: ThreadDeps, metadata: JsonObject | undefined): string {
  const graphId = metadata?.graph_id;
  if (typeof graphId !== 'string' || !isGraphAgent(deps.agents.get(graphId)) || !deps.graphs) {
    throw badRequest('body.supersteps: a thread created with supersteps needs metadata.graph_id naming a graph (its updates go through that graph).');
  }
  return graphId;
}

/** One thread; `not_found` when the tenant has none of that id. */
export async function getThread(deps: ThreadDeps, tenant: string, threadId: string): Promise<Thread> {
  return threadOf(deps, tenant, await threadSession(deps, tenant, threadId));
}

/** Merges `metadata` into the thread's (a key set to null is removed). */
export async function patchThread(deps: ThreadDeps, tenant: string, threadId: string, metadata: JsonObject | undefined): Promise<Thread> {
  checkGraphId(deps, metadata);
  const session = metadata
    ? await deps.store.sessions.updateSessionMetadata(tenant, threadId, metadata).catch((error: unknown) => {
        throw error instanceof AppError && error.code === 'not_found' ? notFound(`Thread "${threadId}"`) : error;
      })
    : await threadSession(deps, tenant, threadId);
  return threadOf(deps, tenant, session);
}

/** Deletes the session, cancelling its active runs first when it has any (as LangGraph's server deletes a busy thread). */
export async function deleteThread(deps: ThreadDeps, tenant: string, threadId: string, by: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await deps.store.sessions.deleteSession(tenant, threadId);
      return;
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') throw notFound(`Thread "${threadId}"`);
      if (!(error instanceof AppError && error.code === 'conflict') || attempt === DELETE_ATTEMPTS) throw error;
    }
    for (const status of ACTIVE_RUN_STATUSES) {
      const runs = await deps.store.runs.findRuns(tenant, { session_id: threadId, status, limit: MAX_QUEUED_BEHIND + 1, offset: 0 });
      for (const run of runs) {
        await deps.runs.cancelRun(tenant, run.id, by).catch((error: unknown) => {
          // Ended meanwhile: nothing left to cancel.
          if (!(error instanceof AppError && (error.code === 'conflict' || error.code === 'not_found'))) throw error;
        });
      }
    }
  }
}

/**
 * A new thread with the thread's metadata (its graph_id naming the graph) and its state: a
 * graph's LangGraph checkpoints are copied (history, tasks and interrupts included), a native
 * session's latest checkpoint. Runs, approvals and traces stay with the source.
 */
export async function copyThread(deps: ThreadDeps, tenant: string, threadId: string): Promise<Thread> {
  const source = await threadSession(deps, tenant, threadId);
  const copy = await deps.store.sessions.createSession(tenant, { session_id: randomUUID(), metadata: threadMetadata(source) });
  try {
    const graphId = graphAgentOf(deps, source);
    if (graphId) {
      await deps.graphs!.copyThread(tenant, source.id, copy.id, graphId);
    } else {
      const latest = await deps.store.sessions.getCheckpoint(tenant, source.id);
      if (latest) await deps.store.sessions.appendCheckpoint(tenant, copy.id, { patch: latest.state, node_id: latest.node_id });
    }
  } catch (error) {
    // A copy that failed half-way is not left behind.
    await deps.store.sessions.deleteSession(tenant, copy.id).catch((cleanup: unknown) => deps.logger.warn({ err: cleanup, thread_id: copy.id }, 'a failed thread copy was not removed'));
    throw error;
  }
  return threadOf(deps, tenant, (await deps.store.sessions.getSession(tenant, copy.id)) ?? copy);
}
