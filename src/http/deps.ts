import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../observability/metrics.js';
import type { ReadinessCheck } from '../ports/backend.js';
import type { EventBus } from '../ports/event-bus.js';
import type { LangGraphDeps } from '../langgraph-server/deps.js';
import type { RunWatch } from '../runtime/run-watch.js';
import type { SseHub } from './sse.js';

/** Mutable lifecycle flags shared by the app and the shutdown sequence. */
export interface Lifecycle {
  draining: boolean;
}

/**
 * Everything the HTTP layer needs, built by the composition root (`src/main/compose.ts`):
 * what the LangGraph services use (the controls for every change, the store for reads, the
 * agents, LangGraph's storage), and the event bus for streams, the process's lifecycle.
 */
export interface AppDeps extends Omit<LangGraphDeps, 'config' | 'logger'> {
  config: Config;
  events: EventBus;
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
  /** Checks run by /health/ready, by name (`redis`, `memory`). */
  readiness: Readonly<Record<string, ReadinessCheck>>;
  /**
   * The workers alive, for the `workers` check of /health/ready ("ok", or "none": runs queued
   * wait); absent where this process executes runs itself (embedded). Never makes it 503.
   */
  liveWorkers?: () => Promise<number>;
  /** The open SSE streams and held waits of this process (ended at shutdown). */
  streams: SseHub;
  /** Tells the waits and run streams of this process when their run vanished with its session. */
  runWatch: RunWatch;
}
