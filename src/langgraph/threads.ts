import { AppError, badRequest, notFound } from '../domain/errors.js';
import { errorMessage, type Checkpoint, type JsonObject } from '../domain/types.js';
import type { GraphDescriptions, GraphRunInput, GraphStateEdit, GraphSuperstep, GraphThreads } from '../ports/graph-threads.js';
import type { GraphEngineDeps, GraphSource } from '../runtime/graph-engine.js';
import { streamInputOf } from './run-input.js';
import type { GraphLoader } from './graph-loader.js';
import { ThreadStateCache } from './state-cache.js';
import { nodeIdOf, StateMirror, threadStateOf, toJson } from './values.js';

/**
 * What the LangGraph Server API does to a graph session beside running it: state edits through
 * the graph (its reducers apply), state and history reads as LangGraph's server shows them,
 * copies and rollbacks, each keeping the session's native checkpoints a mirror of the graph's.
 * (The graphs' descriptions, the rest of {@link GraphThreads}, are descriptions.ts.)
 */
export function createGraphThreads(deps: Pick<GraphEngineDeps, 'store'>, graphs: GraphLoader): Omit<GraphThreads, keyof GraphDescriptions> {
  const { store } = deps;

  async function updateState(tenant: string, sessionId: string, values: JsonObject, edit: GraphStateEdit = {}): Promise<Checkpoint> {
    const session = await store.sessions.getSession(tenant, sessionId);
    if (!session) throw notFound('The session');
    // A session no run has bound yet (a LangGraph thread before its first run) has no native checkpoint either.
    const agentId = session.agent_id || edit.agentId || '';
    const source = graphs.requireSource(agentId);
    const latest = await store.sessions.getCheckpoint(tenant, sessionId);
    if (!latest && session.agent_id !== '') throw notFound('A checkpoint of this session');
    if (edit.ifSeq !== undefined && edit.ifSeq !== latest?.seq_num) {
      throw new AppError('precondition_failed', `The latest checkpoint is seq_num ${latest?.seq_num ?? 'none'}, not ${edit.ifSeq}.`);
    }
    const run = await store.runs.latestRun(tenant, sessionId);
    if (run?.status === 'running') throw new AppError('conflict', 'A run of this session is running.');
    // The graph as the thread's last run had it: a function export builds it from the run's configurable (an assistant's, say).
    const config = { configurable: { ...(run ? configurableOf(await store.runs.getRunInput(tenant, run.id)) : {}), thread_id: sessionId } };
    const graph = await graphs.graphFor(source, tenant, config);
    try {
      const at = { ...config.configurable, ...(edit.checkpointId ? { checkpoint_id: edit.checkpointId } : {}), ...(edit.checkpointNs ? { checkpoint_ns: edit.checkpointNs } : {}) };
      await graph.updateState({ configurable: at }, values, edit.asNode);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw badRequest(`The graph refused the update: ${errorMessage(error)}`);
    }
    const snapshot = await graph.getState(config);
    const written = await store.sessions.appendCheckpoint(tenant, sessionId, {
      patch: new StateMirror(latest?.state ?? {}).patch(snapshot.values),
      node_id: nodeIdOf(snapshot.next),
      ...(latest ? { ifSeq: latest.seq_num } : {}),
      rejectWhileRunning: true,
    });
    return (await store.sessions.getCheckpoint(tenant, sessionId, written.seq_num)) ?? { ...written, state: (toJson(snapshot.values) ?? {}) as JsonObject };
  }

  /** The latest state of a thread as last answered (JSON), while its stored checkpoints stay as they were. */
  const latestStates = new ThreadStateCache();

  async function threadState(
    tenant: string,
    sessionId: string,
    agentId: string,
    read: { checkpointId?: string; checkpointNs?: string; subgraphs?: boolean; version?: Promise<string> } = {},
  ): Promise<JsonObject | null> {
    const source = graphs.requireSource(agentId);
    if (!read.checkpointId && !read.checkpointNs && !read.subgraphs) {
      const text = await latestState(tenant, sessionId, agentId, source, read.version);
      return text === null ? null : (JSON.parse(text) as JsonObject);
    }
    const configurable = checkpointConfigurable(sessionId, read);
    const graph = await graphs.graphFor(source, tenant, { configurable });
    const snapshot = await graph.getState({ configurable }, { subgraphs: read.subgraphs ?? false });
    // LangGraph answers an empty snapshot of the config asked for when it holds no checkpoint there.
    if (snapshot.createdAt === undefined) return null;
    return threadStateOf(snapshot);
  }

  /**
   * The latest state (the common read: no checkpoint named, no subgraphs) as JSON text: the
   * text kept in {@link latestStates} while the thread's version is the one it was made at (one
   * small read), else made from the stored checkpoint, read with its version.
   */
  async function latestState(tenant: string, sessionId: string, agentId: string, source: GraphSource, version?: Promise<string>): Promise<string | null> {
    const checkpoints = graphs.storageOf(tenant).checkpoints;
    const key = `${tenant}\n${agentId}\n${sessionId}`;
    const kept = latestStates.get(key, await (version ?? checkpoints.versionOf(sessionId)));
    if (kept !== undefined) return kept;
    const config = { configurable: { thread_id: sessionId } };
    const entry = await checkpoints.entryFor(config);
    if (!entry) return null;
    const graph = await graphs.graphFor(source, tenant, config);
    // LangGraph reads the checkpoint read above, not a second time.
    graph.checkpointer = checkpoints.primedWith(config, entry);
    const text = JSON.stringify(threadStateOf(await graph.getState(config)));
    latestStates.set(key, entry.version, text);
    return text;
  }

  function latestStateText(tenant: string, sessionId: string, agentId: string, version?: Promise<string>): Promise<string | null> {
    return latestState(tenant, sessionId, agentId, graphs.requireSource(agentId), version);
  }

  function readVersion(tenant: string, sessionId: string): Promise<string> {
    return graphs.storageOf(tenant).checkpoints.versionOf(sessionId);
  }

  async function threadHistory(
    tenant: string,
    sessionId: string,
    agentId: string,
    read: { limit: number; before?: string; checkpointId?: string; checkpointNs?: string; metadata?: Record<string, unknown> },
  ): Promise<JsonObject[]> {
    const source = graphs.requireSource(agentId);
    const configurable = checkpointConfigurable(sessionId, read);
    const graph = await graphs.graphFor(source, tenant, { configurable });
    const states: JsonObject[] = [];
    const options = {
      limit: read.limit,
      ...(read.before ? { before: { configurable: { thread_id: sessionId, checkpoint_ns: read.checkpointNs ?? '', checkpoint_id: read.before } } } : {}),
      ...(read.metadata ? { filter: read.metadata } : {}),
    };
    for await (const snapshot of graph.getStateHistory({ configurable }, options)) states.push(threadStateOf(snapshot));
    return states;
  }

  async function copyThread(tenant: string, sessionId: string, toSessionId: string, agentId: string): Promise<void> {
    const source = graphs.requireSource(agentId);
    await graphs.storageOf(tenant).checkpoints.copyThread(sessionId, toSessionId);
    const config = { configurable: { thread_id: toSessionId } };
    const snapshot = await (await graphs.graphFor(source, tenant, config)).getState(config);
    if (snapshot.createdAt === undefined) return;
    await store.sessions.appendCheckpoint(tenant, toSessionId, { patch: new StateMirror({}).patch(snapshot.values), node_id: nodeIdOf(snapshot.next) });
  }

  async function rollbackRun(tenant: string, sessionId: string, agentId: string, runId: string): Promise<void> {
    const source = graphs.requireSource(agentId);
    if ((await graphs.storageOf(tenant).checkpoints.deleteRunCheckpoints(sessionId, runId)) === 0) return;
    const config = { configurable: { thread_id: sessionId } };
    const snapshot = await (await graphs.graphFor(source, tenant, config)).getState(config);
    const latest = await store.sessions.getCheckpoint(tenant, sessionId);
    const values = snapshot.createdAt === undefined ? {} : snapshot.values;
    await store.sessions.appendCheckpoint(tenant, sessionId, { patch: new StateMirror(latest?.state ?? {}).patch(values), node_id: nodeIdOf(snapshot.next) });
  }

  async function bulkUpdate(tenant: string, sessionId: string, agentId: string, supersteps: readonly GraphSuperstep[]): Promise<void> {
    const source = graphs.requireSource(agentId);
    const config = { configurable: { thread_id: sessionId, checkpoint_ns: '' } };
    const graph = await graphs.graphFor(source, tenant, config);
    try {
      await graph.bulkUpdateState(
        config,
        supersteps.map((step) => ({
          updates: step.updates.map((update) => ({
            values: update.command ? streamInputOf({ command: update.command }) : update.values,
            ...(update.as_node ? { asNode: update.as_node } : {}),
          })),
        })),
      );
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw badRequest(`The graph refused the supersteps: ${errorMessage(error)}`);
    }
    const snapshot = await graph.getState({ configurable: { thread_id: sessionId } });
    await store.sessions.appendCheckpoint(tenant, sessionId, { patch: new StateMirror({}).patch(snapshot.values), node_id: nodeIdOf(snapshot.next) });
  }

  return { updateState, threadState, latestStateText, readVersion, threadHistory, copyThread, rollbackRun, bulkUpdate };
}

/** The configurable naming a checkpoint of a thread: its latest or `checkpointId`, of the root graph or of the subgraph `checkpointNs` names. */
function checkpointConfigurable(sessionId: string, at: { checkpointId?: string; checkpointNs?: string }): Record<string, string> {
  return { thread_id: sessionId, ...(at.checkpointId ? { checkpoint_id: at.checkpointId } : {}), ...(at.checkpointNs ? { checkpoint_ns: at.checkpointNs } : {}) };
}

/** Keys of a run's configurable that name a checkpoint or the run itself, not how the graph is built. */
const NOT_GRAPH_CONFIG = new Set(['thread_id', 'run_id', 'checkpoint_id', 'checkpoint_ns', 'checkpoint_map']);

/** The `configurable` a run was given (its stored graph_input), without the checkpoint's and the run's own names. */
function configurableOf(stored: string | null): Record<string, unknown> {
  const asked = stored === null ? {} : (JSON.parse(stored) as GraphRunInput);
  return Object.fromEntries(Object.entries(asked.config?.configurable ?? {}).filter(([key]) => !NOT_GRAPH_CONFIG.has(key)));
}
