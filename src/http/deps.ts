import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../observability/metrics.js';
import type { ReadinessCheck } from '../ports/backend.js';
import type { EventBus } from '../ports/event-bus.js';
import type { AssistantStore } from '../ports/assistant-store.js';
import type { GraphItemStore } from '../ports/graph-storage.js';
import type { RunControl } from '../ports/run-control.js';
import type { Store } from '../ports/store.js';
import type { GraphThreads } from '../runtime/graph-engine.js';
import type { AgentRegistry } from '../runtime/registry.js';
import type { RunWatch } from '../runtime/run-watch.js';
import type { ScheduleControl } from '../runtime/schedule-control.js';
import type { SseHub } from './sse.js';

/** Mutable lifecycle flags shared by the app and the shutdown sequence. */
export interface Lifecycle {
  draining: boolean;
}

/**
 * Everything the HTTP layer needs, built by the composition root (`src/main/compose.ts`):
 * the controls for every change, the store for reads, the event bus for streams.
 */
export interface AppDeps {
  config: Config;
  /** Reads of sessions, runs, approvals and schedules; checkpoint edits (PATCH/POST state). */
  store: Store;
  events: EventBus;
  /** Starting, resuming and unblocking runs. */
  runs: RunControl;
  /** Creating and deleting schedules with their triggers. */
  schedules: ScheduleControl;
  agents: AgentRegistry;
  /** LangGraph cross-thread memory items per tenant (the /store routes of the LangGraph Server API). */
  graphItems: GraphItemStore;
  /** LangGraph assistants stored per tenant (the /assistants routes). */
  assistants: AssistantStore;
  /** The engine of graph agents (LangGraph), when the registry has any: their state edits go through it. */
  graphs?: GraphThreads;
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
  /** Checks run by /health/ready, by name (`redis`, `memory`). */
  readiness: Readonly<Record<string, ReadinessCheck>>;
  /** The open SSE streams and held waits of this process (ended at shutdown). */
  streams: SseHub;
  /** Tells the waits and run streams of this process when their run vanished with its session. */
  runWatch: RunWatch;
}
