import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EventBus } from '../ports/event-bus.js';
import type { RunControl } from '../ports/run-control.js';
import type { Scheduler } from '../ports/scheduler.js';
import type { Store } from '../ports/store.js';
import type { AgentRegistry } from '../runtime/registry.js';
import type { Metrics } from './metrics.js';
import type { SseHub } from './sse.js';

/** A named dependency check for /health/ready; rejects when the dependency is down. */
export type ReadinessCheck = () => Promise<void>;

/** Mutable lifecycle flags shared by the app and the shutdown sequence. */
export interface Lifecycle {
  draining: boolean;
}

/** Everything the HTTP layer needs, built by `src/main` and passed in. */
export interface AppDeps {
  config: Config;
  store: Store;
  events: EventBus;
  runControl: RunControl;
  /** Schedule triggers (the API upserts and removes them; workers fire them). */
  scheduler: Scheduler;
  agents: AgentRegistry;
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
  /** Checks run by /health/ready, by name (`redis`, `memory`). */
  readiness: Record<string, ReadinessCheck>;
  /** The open SSE streams of this process (ended at shutdown). */
  streams: SseHub;
}
