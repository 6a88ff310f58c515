import type { Checkpoint, JsonObject } from '../domain/types.js';

/*
 * The LangGraph Server API's port to graph agents: what src/langgraph-server/ asks of their
 * sessions besides running them, what it asks about their graphs, and what a LangGraph run
 * carries. The LangGraph plug-in implements it (src/langgraph/threads.ts and descriptions.ts,
 * built by its face's createGraphEngine); the composition root hands it over.
 */

/**
 * What a LangGraph run is asked to do, kept with the run (`graph_input`, JSON): the input of a
 * new run or a command, and the LangGraph run options a LangGraph client may give.
 */
export interface GraphRunInput {
  input?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown };
  /** LangGraph's run config: `configurable` (thread_id and run_id are the run's), `tags`, `recursion_limit`, `metadata`. */
  config?: { configurable?: Record<string, unknown>; tags?: string[]; recursion_limit?: number; metadata?: Record<string, unknown> };
  /** The graph's runtime context (LangGraph's `context`). */
  context?: unknown;
  /** LangGraph stream modes whose chunks the run publishes as `stream` events (`values`, `updates`, `messages`, `custom`, `debug`, `tasks`, `checkpoints`). */
  stream_mode?: string[];
  /** Publish the chunks of subgraphs too (their event names carry the namespace: `mode|ns`). */
  stream_subgraphs?: boolean;
  interrupt_before?: string[] | '*';
  interrupt_after?: string[] | '*';
  /** Run metadata given by the client (kept for its run reads). */
  metadata?: Record<string, unknown>;
  /** The LangGraph assistant the run was started on (kept for its run reads; the engine ignores it). */
  assistant_id?: string;
  /** POST the run to this URL when it ends (run webhooks, src/runtime/run-webhooks.ts; the engine ignores it). */
  webhook?: string;
}

/** Options of a state edit ({@link GraphThreads.updateState}). */
export interface GraphStateEdit {
  /** Apply only when the session's latest checkpoint has this seq_num (If-Match), else `precondition_failed`. */
  ifSeq?: number;
  /** The node the update is written as (LangGraph's `asNode`). @defaultValue the node that wrote last */
  asNode?: string;
  /**
   * The graph agent of a session no run has bound yet (a LangGraph thread created with its
   * `graph_id`, or copied): the edit goes through that agent's graph. Ignored for a bound session.
   */
  agentId?: string;
  /** Update from this LangGraph checkpoint of the session (a fork) instead of its latest. */
  checkpointId?: string;
  /** The namespace of a subgraph (a task's `checkpoint_ns`, `weather:<task id>`): its state is edited, through it. */
  checkpointNs?: string;
}

/** A drawn graph: its nodes and edges, as LangChain's `Graph.toJSON()` writes them. */
export interface GraphDrawing {
  nodes: { id: string | number; type?: string; data?: unknown; metadata?: unknown }[];
  edges: { source: string | number; target: string | number; data?: string; conditional?: boolean }[];
}

/** The JSON schemas of a graph's state, input, output and config; null where it declares none. */
export interface GraphSchemas {
  state: Record<string, unknown> | null;
  input: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  config: Record<string, unknown> | null;
}

/**
 * What the LangGraph Server API tells about the graph of a graph agent (an assistant's
 * `/graph`, `/schemas` and `/subgraphs`), the graph built with the assistant's `configurable`.
 * `unknown_agent` when `agentId` is no graph agent of this process.
 */
export interface GraphDescriptions {
  /** Its nodes and edges (`xray`: subgraphs drawn inside their nodes, to that depth when a number). */
  drawGraph(agentId: string, configurable: Record<string, unknown>, xray?: boolean | number): Promise<GraphDrawing>;
  /** The JSON schemas it declares. */
  graphSchemas(agentId: string, configurable: Record<string, unknown>): Promise<GraphSchemas>;
  /** Its subgraphs (under `namespace`; every depth with `recurse`), each with its schemas, by namespace (`node`, `node|inner`). */
  subgraphSchemas(agentId: string, configurable: Record<string, unknown>, namespace: string | undefined, recurse: boolean): Promise<Record<string, GraphSchemas>>;
}

/**
 * What the LangGraph Server API does to the sessions of graph agents besides running them:
 * state edits through the graph, state and history reads, copies and rollbacks; and what it
 * tells about their graphs ({@link GraphDescriptions}).
 */
export interface GraphThreads extends GraphDescriptions {
  /**
   * Edits a graph session's state through the graph (`updateState`: its reducers apply) and
   * records the new checkpoint; `conflict` while a run of the session is running.
   */
  updateState(tenant: string, sessionId: string, values: JsonObject, edit?: GraphStateEdit): Promise<Checkpoint>;
  /**
   * A graph session's state as LangGraph's server shows a thread's (`ThreadState`: values,
   * next, tasks with their interrupts, checkpoint, metadata, created_at, parent_checkpoint), at
   * its latest checkpoint or at `checkpointId`; null when the graph has no checkpoint there.
   */
  threadState(
    tenant: string,
    sessionId: string,
    agentId: string,
    read?: { checkpointId?: string; checkpointNs?: string; subgraphs?: boolean; version?: Promise<string> },
  ): Promise<JsonObject | null>;
  /** {@link threadState} of the latest checkpoint as JSON text (the answer kept while the thread is unchanged); null without one. */
  latestStateText(tenant: string, sessionId: string, agentId: string, version?: Promise<string>): Promise<string | null>;
  /**
   * The thread's version in storage, as the latest state read compares it: started beside the
   * read of the session (`read.version`), the two go out together. "" for a thread with no
   * checkpoint (a native session has none).
   */
  readVersion(tenant: string, sessionId: string): Promise<string>;
  /** Its checkpoints as `ThreadState`s, newest first: at most `limit`, older than `before`, filtered by metadata. */
  threadHistory(
    tenant: string,
    sessionId: string,
    agentId: string,
    read: { limit: number; before?: string; checkpointId?: string; checkpointNs?: string; metadata?: Record<string, unknown> },
  ): Promise<JsonObject[]>;
  /**
   * Copies the LangGraph checkpoints of session `sessionId` (a graph of `agentId`) to the new
   * session `toSessionId` and mirrors the copy's latest one as that session's first native
   * checkpoint (nothing when the source has none): a copied LangGraph thread.
   */
  copyThread(tenant: string, sessionId: string, toSessionId: string, agentId: string): Promise<void>;
  /**
   * Takes session `sessionId` (a graph of `agentId`) back to its state before run `runId` (a
   * LangGraph rollback): the LangGraph checkpoints the run wrote go, and a native checkpoint
   * mirrors the graph's now-latest values (nulls for keys gone; the native history is only
   * ever appended to). Nothing when the run wrote none. The run should have ended.
   */
  rollbackRun(tenant: string, sessionId: string, agentId: string, runId: string): Promise<void>;
  /**
   * Writes `supersteps` to the new session `sessionId` (a graph of `agentId`) as LangGraph's
   * `bulkUpdateState` does (each superstep one checkpoint of the updates given, as their nodes),
   * and mirrors the latest as the session's native checkpoint: a thread created with its history.
   * `bad_request` when the graph refuses them.
   */
  bulkUpdate(tenant: string, sessionId: string, agentId: string, supersteps: readonly GraphSuperstep[]): Promise<void>;
}

/** One superstep of a thread created with its history: updates applied as their nodes. */
export interface GraphSuperstep {
  updates: { values?: unknown; command?: GraphRunInput['command'] | null | undefined; as_node?: string | null | undefined }[];
}
