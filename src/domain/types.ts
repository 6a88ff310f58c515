/** Plain data types shared by every layer. Field names are the wire names of the API. */

export type JsonObject = Record<string, unknown>;

/** The tenant used for all traffic when authentication is off. */
export const DEFAULT_TENANT = 'DefaultTenant';

/** Client-supplied ids and tenant names must match this. */
export const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** `node_id` of a checkpoint once its run has completed. */
export const END_NODE = '__end__';

export interface Session {
  id: string;
  /** The agent its runs belong to; '' for a session created before any run (its first run binds it). */
  agent_id: string;
  tenant_id: string;
  created_at: string;
  updated_at: string;
  /** Free-form JSON (a LangGraph thread's metadata), at most MAX_SESSION_METADATA_BYTES; {} by default. */
  metadata: JsonObject;
}

export interface Checkpoint {
  session_id: string;
  checkpoint_id: string;
  /** The node the session runs next when resumed; `__end__` once its run completed. */
  node_id: string;
  state: JsonObject;
  /** Starts at 1, rises by exactly 1 per checkpoint of a session. */
  seq_num: number;
  created_at: string;
}

export interface Span {
  span_id: string;
  /** Empty string for a root span. */
  parent_id: string;
  name: string;
  start: string;
  end: string;
  attributes: JsonObject;
  /** The OpenTelemetry trace id it was exported under (32 hex), when tracing is on. */
  trace_id?: string;
  /** The OpenTelemetry span id it was exported as (16 hex), when tracing is on. */
  trace_span_id?: string;
}

export type RunStatus = 'queued' | 'running' | 'interrupted' | 'completed' | 'failed' | 'cancelled';

/** Every run status, in lifecycle order (the API's enum). */
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'interrupted', 'completed', 'failed', 'cancelled'];

/** Statuses during which a session may not start another run. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'interrupted'];

/** Statuses a run never leaves. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

/** How POST /api/runs treats a session that already has an active run. */
export type Multitask = 'reject' | 'enqueue' | 'interrupt';

/** Runs a session may hold queued behind its active one (`multitask: "enqueue"`). */
export const MAX_QUEUED_BEHIND = 50;

/** The `error` of a run cancelled because its deadline (`timeout_ms`, RUN_TIMEOUT_MS) passed. */
export const TIMEOUT_ERROR = 'timeout';
/** The `error` of a run cancelled on request. */
export const CANCELLED_ERROR = 'cancelled';

export interface Run {
  id: string;
  session_id: string;
  agent_id: string;
  status: RunStatus;
  created_at: string;
  updated_at: string;
  error?: string;
  /** The latest approval request that paused this run. */
  approval_id?: string;
  /** When the run is cancelled with `error: "timeout"` if still active (`timeout_ms`). */
  deadline_at?: string;
  /** The seq_num of the session's checkpoint when the run last stopped (paused or ended). */
  seq_num?: number;
}

/** A unit of work for a worker: execute a run from its session's latest checkpoint. */
export interface RunJob {
  /** `start` begins a new run; `resume` continues one (after an approval, or a resume request). */
  kind: 'start' | 'resume';
  tenant: string;
  run_id: string;
  session_id: string;
  agent_id: string;
  /** The decided approval whose answer the interrupted node receives on resume. */
  approval_id?: string;
  /** The W3C trace context of whoever queued the job (tracing on): the worker's spans continue it. */
  trace?: TraceCarrier;
  /** An approval's resume (tracing on): the trace the run was started in, which the resumed attempt links to. */
  run_trace?: TraceCarrier;
}

/** A W3C trace context as it travels in a job: its `traceparent` and `tracestate` headers. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** `cancelled`: closed without an answer (its run was cancelled or failed). */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';

/** What happens to an approval nobody answered by its `expires_at`. */
export type ApprovalTimeoutAction = 'approve' | 'reject' | 'fail';

/** `decided_by` of an approval the system decided when it expired. */
export const TIMEOUT_DECIDER = 'timeout';

export interface Approval {
  id: string;
  session_id: string;
  node_id: string;
  prompt: string;
  requested_at: string;
  run_id: string;
  agent_id: string;
  status: ApprovalStatus;
  comment?: string;
  decided_by?: string;
  decided_at?: string;
  /** When the system decides it if nobody has (`ctx.interrupt({ expires_in_ms })`). */
  expires_at?: string;
  /** What the system decides at `expires_at`. */
  on_timeout?: ApprovalTimeoutAction;
  /**
   * JSON the request carries for whoever answers it (a LangGraph `interrupt(value)`'s value,
   * `ctx.interrupt({ payload })`); at most MAX_APPROVAL_JSON_BYTES of JSON.
   */
  payload?: unknown;
  /** The JSON answer given with the decision, when one was (LangGraph's `Command({ resume })`). */
  resume?: unknown;
}

export interface Schedule {
  id: string;
  agent_id: string;
  cron_expr: string;
  input: JsonObject;
  new_session: boolean;
  timezone: string;
  next_run: string;
  created_at: string;
  /** The session reused by every fire when `new_session` is false. */
  session_id?: string;
  /** No tick after this time fires (RFC 3339); the first one past it removes the trigger. */
  end_time?: string;
  /** false: kept, but its ticks do not fire (its trigger is removed). @defaultValue true */
  enabled?: boolean;
  /**
   * For a graph agent: what each fire's run asks its engine (StartRunRequest.graph: a
   * LangGraph cron's input, config, context, …), in place of `input`.
   */
  graph?: Record<string, unknown>;
  /** When a tick finds the reused session's run active. @defaultValue reject (the tick is skipped) */
  multitask?: Multitask;
  /** Free-form JSON (a LangGraph cron's metadata). @defaultValue `{}` */
  metadata?: JsonObject;
  /** Each fire's run is POSTed here when it ends (StartRunRequest.webhook). */
  webhook?: string;
  /** When it last changed; absent until its first change. */
  updated_at?: string;
  /**
   * A schedule with a new session per fire (a stateless LangGraph cron): what becomes of each
   * fire's session once its run stops. `delete`: the session goes (a run paused at an interrupt
   * is cancelled first). `keep`: it stays while the schedule's history lists its fire (the last
   * SCHEDULE_HISTORY_LIMIT fires), and expires as any session does. Absent: kept, as a native
   * schedule's sessions are.
   */
  on_run_completed?: 'delete' | 'keep';
}

export type ScheduleFireStatus = 'running' | 'completed' | 'failed' | 'interrupted' | 'cancelled' | 'skipped';

/**
 * Storage bounds when the config does not set them (SERVICE_MAX_STATE_BYTES,
 * SERVICE_MAX_STATE_KEYS, SERVICE_CHECKPOINTS_RETAIN), and the per-session caps of runs and spans.
 */
export const DEFAULT_STORAGE_LIMITS = Object.freeze({
  /**
   * 1 MiB + 64 KiB: a run input as large as the largest body accepted (1 MiB, the API's and the
   * webhook receiver's) fits, with 64 KiB for a webhook delivery's envelope (its type and
   * source) and the first keys the agent adds.
   */
  maxStateBytes: 1024 * 1024 + 64 * 1024,
  maxStateKeys: 65_536,
  checkpointsRetain: 50,
  /** Not configurable: runs kept per session (a session a schedule reuses every minute keeps its last 100). */
  runsRetain: 100,
  /** Not configurable: trace spans kept per session. */
  spansRetain: 1_000,
});

/**
 * Bytes of LangGraph memory items (a graph's cross-thread store) one tenant may hold when the
 * config does not say (SERVICE_LANGGRAPH_STORE_MAX_BYTES).
 */
export const DEFAULT_GRAPH_ITEMS_MAX_BYTES = 64 * 1024 * 1024;

/**
 * What a tenant's event log retains for resuming streams (SERVICE_EVENTS_RETAIN,
 * SERVICE_EVENTS_MAX_BYTES, SERVICE_EVENTS_RUN_MAX_BYTES): at most `count` events, at most
 * `bytes` of their JSON (UTF-8) per tenant and `runBytes` per run. Past any of them the oldest
 * go (the run's oldest for `runBytes`). 64 MiB per tenant as its LangGraph memory items;
 * 16 MiB per run, so one run streaming large chunks takes at most a quarter of its tenant's
 * log and the other runs' recent events stay resumable. Both hold 64 of the largest events (a
 * 256 KiB stream chunk); the settings accept no less than {@link MIN_EVENTS_BYTES}.
 */
export const DEFAULT_EVENT_RETENTION = Object.freeze({
  count: 10_000,
  bytes: 64 * 1024 * 1024,
  runBytes: 16 * 1024 * 1024,
});

/**
 * Past the count cap a tenant's log is trimmed in batches: when it holds more than `count` and
 * {@link eventCountSlack} more events, its oldest go until it holds `count`. The newest `count`
 * are always retained and the log holds at most 1 % more between trims, while dropping the
 * oldest costs one step a batch on Redis, not one an event. Below 100 the cap is exact.
 */
export function eventCountSlack(count: number): number {
  return Math.floor(count / EVENT_COUNT_SLACK_DIVISOR);
}

/** {@link eventCountSlack}'s divisor (the Redis scripts are given it: includes/publishEvent.lua). */
export const EVENT_COUNT_SLACK_DIVISOR = 100;

/** The least byte cap the settings accept: one of the largest events (a stream chunk with its envelope) fits four times. */
export const MIN_EVENTS_BYTES = 1024 * 1024;

/** History records kept per schedule; older ones are dropped. */
export const SCHEDULE_HISTORY_LIMIT = 100;

/** A fire record in one of these statuses never changes again. */
export const FINAL_FIRE_STATUSES: readonly ScheduleFireStatus[] = ['completed', 'failed', 'cancelled'];

/** Run statuses that settle the fire record of a scheduled run, with the same name. */
export const SETTLING_RUN_STATUSES: readonly ('completed' | 'failed' | 'interrupted' | 'cancelled')[] = [
  'completed',
  'failed',
  'interrupted',
  'cancelled',
];

export interface ScheduleHistoryRecord {
  schedule_id: string;
  session_id: string;
  /** When the fire started executing; later than `due_at` when it fired late. */
  fired_at: string;
  /** The tick the fire belongs to. */
  due_at: string;
  status: ScheduleFireStatus;
  run_id?: string;
  error?: string;
}

export const RUN_EVENT_TYPES = [
  'node_start',
  'node_end',
  'interrupted',
  'approval_decided',
  'completed',
  'failed',
  'cancelled',
  'custom',
  'stream',
] as const;

export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** Event types that end a run. */
export const RUN_END_EVENTS: readonly RunEventType[] = ['completed', 'failed', 'cancelled'];

/** Largest `data` of a `custom` event (`ctx.emit`), as JSON bytes. */
export const MAX_CUSTOM_EVENT_BYTES = 16 * 1024;

/** Largest `data` of a `stream` event (a LangGraph stream chunk a LangGraph client asked for), as JSON bytes. */
export const MAX_STREAM_EVENT_BYTES = 256 * 1024;

/** A run event as published on the EventBus and framed on the SSE stream. */
export interface RunEvent {
  type: RunEventType;
  session: string;
  run_id: string;
  agent_id: string;
  ts: string;
  node?: string;
  status?: 'ok' | 'error';
  approval_id?: string;
  approved?: boolean;
  /** approval_decided: the deciding principal's subject, or `timeout` when the approval expired. */
  by?: string;
  error?: string;
  /** custom: the name given to `ctx.emit`; stream: the LangGraph stream mode (`mode|namespace` for a subgraph's). */
  name?: string;
  /** custom: the data given to `ctx.emit` (any JSON); stream: the chunk. */
  data?: unknown;
}

/** A RunEvent with the id the bus assigned and the tenant it belongs to. */
export interface StoredEvent {
  id: string;
  tenant: string;
  event: RunEvent;
  /**
   * Only on a live announcement of the end of a run a request waits for (NewRun.waited), when
   * the adapter carries it: the run and its state as the run ended. Never stored or streamed.
   */
  stop?: { run: Run; state: JsonObject };
}

export type Role = 'viewer' | 'user' | 'admin';

export const ROLE_RANK: Readonly<Record<Role, number>> = { viewer: 1, user: 2, admin: 3 };

export function roleAtLeast(role: Role, minimum: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[minimum];
}

/** Who is calling: resolved by `src/auth/` from a credential, or the anonymous default. */
export interface Principal {
  subject: string;
  tenant: string;
  role: Role;
  /** How the caller authenticated. */
  kind: 'anonymous' | 'jwt' | 'apikey';
}

/** Longest error message a run or span keeps (a node may throw anything); longer ones are cut. */
export const MAX_ERROR_CHARS = 2_000;
/** Longest approval prompt kept; longer ones are cut. */
export const MAX_PROMPT_CHARS = 4_000;

/** What the system may decide at an approval's expiry. */
export const APPROVAL_TIMEOUT_ACTIONS: readonly ApprovalTimeoutAction[] = ['approve', 'reject', 'fail'];
/** Longest expiry of an approval request: 30 days. */
export const MAX_APPROVAL_EXPIRY_MS = 30 * 86_400_000;

/** A failure's message for a run's `error`: an Error's (or an object's `message`), clipped. */
export function errorMessage(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return clip(typeof message === 'string' ? message : String(error), MAX_ERROR_CHARS);
}
/** Largest approval `payload` and `resume`, each in bytes of JSON (64 KiB); larger ones are refused. */
export const MAX_APPROVAL_JSON_BYTES = 64 * 1024;

/** `text` cut to `max` characters, marked with an ellipsis when cut: list reads stay bounded in bytes. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The default bounds of stored LangGraph assistants: assistants per tenant
 * (SERVICE_ASSISTANTS_MAX), versions per assistant (SERVICE_ASSISTANT_VERSIONS_MAX) and bytes
 * of JSON per tenant, every version counted (SERVICE_ASSISTANTS_MAX_BYTES, 64 MiB).
 */
export const DEFAULT_ASSISTANT_LIMITS = { maxPerTenant: 1000, maxVersions: 100, maxTenantBytes: 64 * 1024 * 1024 } as const;
