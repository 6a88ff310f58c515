import { END_NODE, type ApprovalTimeoutAction, type JsonObject } from '../domain/types.js';

/** What a human (or, for an expired request, the system) answered to `ctx.interrupt`. */
export interface InterruptDecision {
  approved: boolean;
  comment: string;
  /** The JSON answer (`resume` of POST /api/approval/respond); present only when one was given. */
  resume?: unknown;
}

/** What a node asks a human with `ctx.interrupt`. */
export interface InterruptRequest {
  prompt: string;
  /**
   * JSON shown to whoever answers (the approval's `payload`), at most 64 KiB of it
   * (MAX_APPROVAL_JSON_BYTES); a larger one, or one JSON cannot hold, throws.
   */
  payload?: unknown;
  /** The request expires this long after it is made; the system then decides it (`on_timeout`). */
  expires_in_ms?: number;
  /** What the system decides at expiry: `reject` (the default), `approve`, or `fail` the run. */
  on_timeout?: ApprovalTimeoutAction;
}

/** What a node sees besides the state. */
export interface NodeContext {
  run_id: string;
  session_id: string;
  agent_id: string;
  tenant: string;
  /** 1 on the first attempt of the node, rising with each retry (`retry` of the node). */
  attempt: number;
  /**
   * Fires when the run is cancelled (POST /api/runs/{id}/cancel, its deadline, a new run with
   * `multitask: "interrupt"`) or the node's `timeoutMs` passes. Pass it to fetch and friends;
   * whatever the node returns after it fired is discarded, no checkpoint is written.
   */
  signal: AbortSignal;
  /**
   * Asks a human. The first time, the run pauses here: an approval request is stored, the run
   * becomes `interrupted` and the worker moves on. Once answered, the node runs again from the
   * same checkpoint and this call returns the decision. A node may ask several times: each call
   * is its own request (its own approval id), and on each resume the calls already answered
   * return their answers again, in order, so the node's code runs top to bottom.
   */
  interrupt(request: InterruptRequest): Promise<InterruptDecision>;
  /**
   * Publishes a `custom` event `{ name, data }` on the run's stream right away (a token of an
   * LLM's answer, progress). `data` is any JSON of at most 16 KiB; a larger one throws.
   */
  emit(name: string, data?: unknown): Promise<void>;
  /**
   * LangChain callback handlers for the LangChain calls the node makes:
   * `model.invoke(messages, { callbacks: ctx.callbacks })` (a tool's or a chain's `invoke` and
   * `stream` alike). With tracing on (`OTEL_*`), each model call is then an OpenTelemetry GenAI
   * span under the node's (`chat <model>`, its token usage) and each tool call an
   * `execute_tool <name>` span; with tracing off the list is empty. Pass it on as it is, or
   * with handlers of your own in a new array (`[...ctx.callbacks, mine]`).
   */
  callbacks: object[];
}

/** A graph node: reads the state, returns a patch shallow-merged into it (or nothing). */
export type AgentNode = (state: JsonObject, ctx: NodeContext) => Promise<JsonObject | void> | JsonObject | void;

/** How often a node that throws is tried before its run fails. */
export interface RetryPolicy {
  /** Tries in all, the first included (1 = no retry). */
  attempts: number;
  /** Pause before the second try; each later pause doubles. @defaultValue 0 */
  backoffMs?: number;
}

/** A node with options: retries and a time limit per attempt. */
export interface NodeSpec {
  run: AgentNode;
  retry?: RetryPolicy;
  /** An attempt still running after this long fails (its `ctx.signal` fires); retried per `retry`. */
  timeoutMs?: number;
}

/** The next node after a node: fixed, or chosen from the state after the node ran. */
export type AgentEdge = string | ((state: JsonObject) => string);

export interface AgentDefinition {
  id: string;
  description: string;
  entry: string;
  /** Nodes by name: a function, or a {@link NodeSpec} with options. */
  nodes: Record<string, AgentNode | NodeSpec>;
  /** Next node by node name; `__end__` ends the run. A node without an edge ends the run. */
  edges: Record<string, AgentEdge>;
  /**
   * Most runs of this agent running at once, all tenants together; a run past it stays queued
   * until one of them ends (SERVICE_AGENT_MAX_RUNNING overrides it). @defaultValue no cap
   */
  maxConcurrency?: number;
}

/**
 * What runs an agent that is not made with `defineAgent`: a LangGraph.js graph of a
 * `langgraph.json` (SERVICE_LANGGRAPH_JSON). Opaque to the runtime: the engine of `src/langgraph/`
 * (the composition root holds it, by the agent's kind) knows what `load` answers; the runtime
 * only routes the agent's runs to that engine.
 */
export interface GraphSource {
  readonly kind: 'langgraph';
  /** The graph id of `langgraph.json` (the agent id). */
  readonly graphId: string;
  /** Where it comes from: `./path/file.ts:exportName`, as written in `langgraph.json`. */
  readonly spec: string;
  /** That file, absolute, and the export: where its TypeScript types are read (schemas). */
  readonly file?: string;
  readonly exportName?: string;
  /**
   * The graph for a run: the export as it is (a compiled graph), compiled (a `StateGraph`), or
   * what a function export answers for `config` (a LangGraph `RunnableConfig`).
   */
  load(config: Record<string, unknown>): Promise<unknown>;
  /**
   * The graph's defaults of LANGGRAPH_CONFIG (LangGraph's meaning: its system assistant's
   * config and context): a run's own `configurable`, `metadata` and `context` fields win over
   * them, its `tags` add to them.
   */
  readonly defaults?: { readonly config: Readonly<Record<string, unknown>>; readonly context?: Readonly<Record<string, unknown>> };
}

/** An agent made with {@link defineAgent}: its nodes run one by one (src/runtime/native/). */
export interface NativeAgent extends Readonly<AgentDefinition> {
  readonly kind: 'native';
  /** The node after `node` for the given state; throws for an edge to an unknown node. */
  next(node: string, state: JsonObject): string;
  /** The node `name` with its options, or undefined when the agent has no such node. */
  node(name: string): Readonly<NodeSpec> | undefined;
}

/** An agent another engine runs whole (a LangGraph graph of `langgraph.json`): the runtime knows only its id and node names. */
export interface GraphAgent {
  readonly kind: 'graph';
  readonly id: string;
  readonly description: string;
  /** Where its sessions start: `__start__`. */
  readonly entry: string;
  /** Its node names, as its graph draws them (GET /api/agents). */
  readonly nodeNames: readonly string[];
  readonly graph: GraphSource;
  /** Most runs of the graph running at once (its `max_concurrency` in langgraph.json); absent: no cap. */
  readonly maxConcurrency?: number;
}

/** What the registry holds: an agent of either kind; ask `kind` (or {@link isGraphAgent}) which. */
export type Agent = NativeAgent | GraphAgent;

/** Whether `agent` is run by another engine (an agent module made with an older `defineAgent` has no `kind`: native). */
export function isGraphAgent(agent: Agent | undefined): agent is GraphAgent {
  return agent?.kind === 'graph';
}

/** The names of an agent's nodes. */
export function nodeNamesOf(agent: Agent): readonly string[] {
  return isGraphAgent(agent) ? agent.nodeNames : Object.keys(agent.nodes);
}

function toSpec(id: string, name: string, node: AgentNode | NodeSpec): Readonly<NodeSpec> {
  const spec: NodeSpec = typeof node === 'function' ? { run: node } : node;
  const where = `Agent "${id}", node "${name}"`;
  if (typeof spec?.run !== 'function') throw new Error(`${where}: a node is a function or { run, retry?, timeoutMs? }.`);
  if (spec.retry !== undefined) {
    const { attempts, backoffMs = 0 } = spec.retry;
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > 100) throw new Error(`${where}: retry.attempts must be an integer from 1 to 100.`);
    if (!Number.isInteger(backoffMs) || backoffMs < 0) throw new Error(`${where}: retry.backoffMs must be an integer ≥ 0.`);
  }
  if (spec.timeoutMs !== undefined && (!Number.isInteger(spec.timeoutMs) || spec.timeoutMs < 1)) {
    throw new Error(`${where}: timeoutMs must be a positive integer.`);
  }
  return Object.freeze({ ...spec });
}

/**
 * Validates an agent graph at definition time (fail fast): the entry and every fixed edge
 * target must be nodes, every edge must start at a node, and node options must be sound.
 */
export function defineAgent(definition: AgentDefinition): NativeAgent {
  const { id, entry, nodes, edges } = definition;
  const known = (name: string) => name === END_NODE || Object.hasOwn(nodes, name);
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new Error(`Agent id "${id}" is not a valid id.`);
  if (!Object.hasOwn(nodes, entry)) throw new Error(`Agent "${id}": entry "${entry}" is not a node.`);
  const { maxConcurrency } = definition;
  if (maxConcurrency !== undefined && (!Number.isInteger(maxConcurrency) || maxConcurrency < 1)) {
    throw new Error(`Agent "${id}": maxConcurrency must be a positive integer.`);
  }
  for (const [from, edge] of Object.entries(edges)) {
    if (!Object.hasOwn(nodes, from)) throw new Error(`Agent "${id}": edge from unknown node "${from}".`);
    if (typeof edge === 'string' && !known(edge)) throw new Error(`Agent "${id}": edge to unknown node "${edge}".`);
  }
  const specs = new Map(Object.entries(nodes).map(([name, node]) => [name, toSpec(id, name, node)]));
  return Object.freeze({
    ...definition,
    kind: 'native' as const,
    next(node: string, state: JsonObject): string {
      const edge = edges[node];
      const target = edge === undefined ? END_NODE : typeof edge === 'string' ? edge : edge(state);
      if (!known(target)) throw new Error(`Agent "${id}": node "${node}" leads to unknown node "${target}".`);
      return target;
    },
    node(name: string): Readonly<NodeSpec> | undefined {
      return specs.get(name);
    },
  });
}
