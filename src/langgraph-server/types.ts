import type { Multitask } from '../domain/types.js';

/**
 * The vocabulary of the LangGraph Server API the services speak: stream modes, multitask
 * strategies, run and thread statuses, and what a run creation asks (the fields the services
 * read of the body `@langchain/langgraph-sdk` sends; the HTTP layer validates it), and the
 * multitask strategy as agentplane's.
 */

/** Stream modes a run can be asked for; `events` and `tools` are refused (400). */
export const STREAM_MODES = ['values', 'updates', 'messages', 'messages-tuple', 'custom', 'debug', 'tasks', 'checkpoints', 'events'] as const;
export type StreamMode = (typeof STREAM_MODES)[number];
/**
 * What a thread's stream (`GET /threads/{id}/stream`) shows: `run_modes` its runs' frames with
 * a `run_done` metadata frame at each run's end, `lifecycle` only each run's start and end
 * (`metadata` frames), `state_update` the thread's state updates (none are sent here).
 */
export const THREAD_STREAM_MODES = ['run_modes', 'lifecycle', 'state_update'] as const;
export type ThreadStreamMode = (typeof THREAD_STREAM_MODES)[number];

export const MULTITASK_STRATEGIES = ['reject', 'interrupt', 'rollback', 'enqueue'] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

export const LANGGRAPH_RUN_STATUSES = ['pending', 'running', 'error', 'success', 'timeout', 'interrupted'] as const;
export type LangGraphRunStatus = (typeof LANGGRAPH_RUN_STATUSES)[number];

export const THREAD_STATUSES = ['idle', 'busy', 'interrupted', 'error'] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];

/** `multitask_strategy` as agentplane's multitask; rollback rolls back first where it can (runs), then acts as interrupt. */
const MULTITASK: Record<MultitaskStrategy, Multitask> = { reject: 'reject', enqueue: 'enqueue', interrupt: 'interrupt', rollback: 'interrupt' };

/** The multitask of a strategy (reject when none is given). */
export function multitaskOf(strategy: MultitaskStrategy | undefined): Multitask {
  return MULTITASK[strategy ?? 'reject'];
}

/** The fields of `value` that are defined. */
export function definedOf<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** `interrupt_before` / `interrupt_after`: every node, or these. */
export type NodeList = '*' | string[];

/** LangGraph run config: the keys agentplane passes on (others are ignored). */
export interface RunConfig {
  tags?: string[] | undefined;
  recursion_limit?: number | undefined;
  configurable?: Record<string, unknown> | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** What the services read of a run creation (`POST /threads/{id}/runs[/wait|/stream]`, `POST /runs/wait|stream`). */
export interface RunCreate {
  assistant_id: string;
  input?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown } | undefined;
  config?: RunConfig | undefined;
  context?: unknown;
  metadata?: Record<string, unknown> | undefined;
  stream_mode?: StreamMode | StreamMode[] | undefined;
  stream_subgraphs?: boolean | undefined;
  interrupt_before?: NodeList | undefined;
  interrupt_after?: NodeList | undefined;
  checkpoint_id?: string | undefined;
  checkpoint?: { checkpoint_id?: string | undefined; checkpoint_ns?: string | undefined; checkpoint_map?: Record<string, unknown> | null | undefined } | undefined;
  multitask_strategy?: MultitaskStrategy | undefined;
  if_not_exists?: 'reject' | 'create' | undefined;
  on_disconnect?: 'cancel' | 'continue' | undefined;
  on_completion?: 'delete' | 'keep' | undefined;
  after_seconds?: number | undefined;
  webhook?: string | undefined;
}

/** What a LangGraph run keeps beside the engine's options in its stored input: its metadata, strategy and assistant. */
export interface RunRecord {
  metadata?: Record<string, unknown>;
  multitask_strategy?: MultitaskStrategy;
  /** The assistant the run was started on (absent: its graph's default, and for a native agent's run). */
  assistant_id?: string;
}

/** A run as LangGraph's server answers it (and posts it to a run's webhook: a type, so a JSON object). */
export type LangGraphRun = {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: LangGraphRunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy: MultitaskStrategy;
  /** A pending run (agentplane's, beyond LangGraph's Run): its tenant's runs waiting for a worker slot, and running, and the workers alive. */
  queue?: { tenant_queued: number; tenant_running: number; workers: number };
};
