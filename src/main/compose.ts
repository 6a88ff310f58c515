import type { Logger } from 'pino';
import { createMemoryBackend } from '../adapters/memory/backend.js';
import { createRedisBackend } from '../adapters/redis/backend.js';
import type { Config } from '../config.js';
import { agentCaps, capsAgents, type FairShare } from '../domain/fair-share.js';
import { WEBHOOK_ATTEMPTS } from '../domain/run-webhook.js';
import { standardWebhooksKey } from '../domain/standard-webhooks.js';
import { DEFAULT_STORAGE_LIMITS } from '../domain/types.js';
import { runJsonOf } from '../langgraph-server/run-json.js';
import { Metrics } from '../observability/metrics.js';
import type { Backend } from '../ports/backend.js';
import type { RunControl } from '../ports/run-control.js';
import type { GraphThreads } from '../ports/graph-threads.js';
import type { CreateGraphEngine } from '../runtime/graph-engine.js';
import { createNativeEngine } from '../runtime/native/engine.js';
import { createRunDriver } from '../runtime/run/run-driver.js';
import { startExpiring } from '../runtime/expiry.js';
import type { AgentRegistry } from '../runtime/registry.js';
import { createRunControl } from '../runtime/run-control.js';
import { withTraceContext } from '../runtime/traced-run-queue.js';
import { warnWithoutWorkers } from '../runtime/workerless-warning.js';
import { createReaper } from '../runtime/reaper.js';
import { every } from '../runtime/every.js';
import { createRunJobHandler } from '../runtime/run-job.js';
import { RunLifecycle } from '../runtime/run-lifecycle.js';
import { createTemporarySessions } from '../runtime/temporary-sessions.js';
import { createRunWebhooks, type RunWebhooks } from '../runtime/run-webhooks.js';
import { RunSignals } from '../runtime/run-signals.js';
import { createRunTimers } from '../runtime/run-timers.js';
import { createScheduleControl, startReconciling, type ScheduleControl } from '../runtime/schedule-control.js';
import { createScheduleFirer } from '../runtime/schedule-fire.js';
import { createFireSessions } from '../runtime/schedule-sessions.js';
import type { HttpApp } from '../ports/http-app.js';

export interface ComposeOptions {
  logger: Logger;
  agents: AgentRegistry;
  /** prom-client's process metrics on this process's registry. @defaultValue true */
  defaultMetrics?: boolean;
  /** The `http.app` of langgraph.json: API processes serve it, every process delivers path webhooks to it. */
  httpApp?: HttpApp | undefined;
  /**
   * The LangGraph plug-in's engine (src/main/graphs.ts `graphEngineFor`), given when the agents
   * include graphs: it runs their runs and serves their threads. Without it a graph agent's run
   * fails as not registered here.
   */
  graphEngine?: CreateGraphEngine | undefined;
}

/**
 * Everything a process is made of, built once from its Config: the adapters of its backend,
 * the controls every entry point shares (runs, schedules), the metrics, and the two kinds of
 * background work a process may take on (executing run jobs, firing schedules).
 */
export interface Composition {
  readonly config: Config;
  readonly logger: Logger;
  readonly agents: AgentRegistry;
  readonly backend: Backend;
  readonly metrics: Metrics;
  /** Starting, resuming and unblocking runs: the HTTP routes, schedule fires and bridges use this one. */
  readonly runs: RunControl;
  /** Creating and deleting schedules with their triggers. */
  readonly schedules: ScheduleControl;
  /** True without REDIS_URL: the API process also executes runs and fires schedules. */
  readonly embedded: boolean;
  /** What ends runs, shared by the executor, the controls, timers and the reaper. */
  readonly lifecycle: RunLifecycle;
  /** Run webhooks: enqueued by whatever ends a run here, delivered by {@link startExecuting}. */
  readonly webhooks: RunWebhooks;
  /** The thread operations of the graph agents' sessions (LangGraph), when the registry has any. */
  readonly graphs?: GraphThreads;
  /** The `http.app` of langgraph.json, when it has one (ComposeOptions.httpApp). */
  readonly httpApp?: HttpApp;
  /**
   * Executes run jobs from the backend's queue in this process, with what keeps runs from
   * hanging: cancel signals, run deadlines and approval expiries (every second), and the
   * reaper (every RUN_REAPER_INTERVAL_MS, one process at a time); and delivers run webhooks.
   * Idempotent.
   */
  startExecuting(): void;
  /**
   * Fires schedules in this process unless SERVICE_SCHEDULES is false, and reconciles the
   * triggers with the stored schedules (retried until complete). Idempotent.
   */
  startScheduling(): void;
  /** Removes sessions idle past SERVICE_SESSION_TTL, periodically (nothing when it is 0). Idempotent. */
  startExpiring(): void;
  /** Stops background work and closes every connection of the backend. Safe to call twice. */
  close(): Promise<void>;
}

/** The composition root: the one place adapters, controls and metrics are built and wired. */
export function compose(config: Config, options: ComposeOptions): Composition {
  const { logger, agents, httpApp } = options;
  // The backend reports unconfirmed writes only while serving requests, after `metrics` exists.
  // The agents' caps (their own, SERVICE_AGENT_MAX_RUNNING over them) join the tenants' shares.
  const fairShare = { ...config.fairShare, agents: agentCaps(agents.list(), config.fairShare.agents) };
  const backend = createBackend(config, fairShare, logger, () => metrics.unconfirmedWrites.inc());
  const { store, events, queue, scheduler } = backend;
  const metrics: Metrics = new Metrics({
    defaultMetrics: options.defaultMetrics ?? true,
    pendingApprovals: () => store.approvals.countPendingApprovals(),
    usage: () => store.usage(),
    backendMemory: backend.mode === 'redis',
    // Every tenant's depth (the gauges rank them by queued + running and sum the rest); on Redis the counts all processes share.
    tenantQueues: { top: config.SERVICE_METRICS_TENANTS, depths: () => queue.depths(Number.MAX_SAFE_INTEGER) },
    // The capped agents' runs (all tenants): no gauge, and no read per scrape, without a capped agent.
    ...(capsAgents(fairShare) ? { agentQueues: () => queue.agentDepths() } : {}),
  });
  const lifecycle = new RunLifecycle({
    store,
    events,
    queue,
    logger,
    onRunStatus: (run) => metrics.runs.inc({ agent_id: run.agent_id, status: run.status }),
    onEvent: (event) => metrics.eventsPublished.inc({ type: event.type }),
    onRunEnded: (tenant, run) => {
      webhooks.ended(tenant, run);
      temporarySessions.ended(tenant, run);
    },
    onScheduledRunSettled: (tenant, run, scheduleId) => fireSessions.settled(tenant, run, scheduleId),
  });
  const webhooks = createRunWebhooks({
    store,
    queue: backend.webhooks,
    logger,
    // The body is the run as LangGraph's server posts it, read as the LangGraph routes show runs.
    describe: (run, asked) => runJsonOf(run, asked),
    ...(config.SERVICE_WEBHOOK_SIGNING_SECRET ? { signingKey: standardWebhooksKey(config.SERVICE_WEBHOOK_SIGNING_SECRET) } : {}),
    allowPrivate: config.SERVICE_WEBHOOK_ALLOW_PRIVATE,
    timeoutMs: config.SERVICE_WEBHOOK_TIMEOUT_MS,
    ...(httpApp ? { loopback: async (path: string, init: RequestInit) => httpApp.fetch(new Request(new URL(path, 'http://localhost'), init)) } : {}),
  });
  const temporarySessions = createTemporarySessions({ store, webhooks, logger });
  const fireSessions = createFireSessions({
    store,
    end: (tenant, runId, end) => lifecycle.end(tenant, runId, end),
    webhookEnqueued: (runId) => webhooks.enqueued(runId),
    logger,
  });
  const webhookPaths = httpApp !== undefined;
  // Jobs carry the trace context of the request that queued them (when tracing is on). On
  // Redis, runs wait for worker processes: a run queued while none is alive is a warning.
  const runQueue = backend.mode === 'memory' ? withTraceContext(queue) : warnWithoutWorkers(withTraceContext(queue), logger);
  const runs = createRunControl({ store, queue: runQueue, agents, lifecycle, logger, defaultTimeoutMs: config.RUN_TIMEOUT_MS, webhookPaths });
  const schedules = createScheduleControl({ store, scheduler, agents, maxPerTenant: config.SERVICE_SCHEDULES_MAX_PER_TENANT, webhookPaths });
  // The LangGraph plug-in's engine, built only when graphs are configured.
  const graphEngine = options.graphEngine?.({
    store,
    agents,
    checkpoints: backend.graphCheckpoints,
    items: backend.graphItems,
    retain: config.SERVICE_CHECKPOINTS_RETAIN,
    maxCheckpointBytes: config.SERVICE_MAX_STATE_BYTES,
    stepLimit: config.RUN_STEP_LIMIT,
  });
  let executing = false;
  let stopReconciling: (() => void) | undefined;
  let stopExpiring: (() => void) | undefined;
  const stopWorkers: (() => void)[] = [];

  return {
    config,
    logger,
    agents,
    backend,
    metrics,
    runs,
    schedules,
    lifecycle,
    webhooks,
    ...(graphEngine ? { graphs: graphEngine.threads } : {}),
    ...(httpApp ? { httpApp } : {}),
    embedded: backend.mode === 'memory',
    startExecuting() {
      if (executing) return;
      executing = true;
      const signals = new RunSignals(events);
      // The engines by the kind of agent they run: the node loop, and the graph engine when graphs are configured.
      const engines = { native: createNativeEngine({ stepLimit: config.RUN_STEP_LIMIT }), ...(graphEngine ? { graph: graphEngine.engine } : {}) };
      const execute = createRunDriver({ store, journal: backend.journal, lifecycle, signals, logger, agents, engines });
      const jobs = createRunJobHandler({ execute, lifecycle, logger });
      backend.consumer().start(jobs.handle, jobs.failed);
      backend.webhookConsumer().start(webhooks.deliver, webhooks.gaveUp);
      const timers = createRunTimers({ store, runs, lifecycle, logger });
      const reaper = createReaper({
        store,
        queue,
        lifecycle,
        logger,
        everyMs: config.RUN_REAPER_INTERVAL_MS,
        onStuck: (count) => metrics.runsStuck.set(count),
      });
      stopWorkers.push(
        () => signals.close(),
        every(1_000, () => timers.sweep(), logger, 'run timer sweep'),
        every(config.RUN_REAPER_INTERVAL_MS, () => reaper.pass(), logger, 'reaper pass'),
      );
    },
    startScheduling() {
      if (!config.SERVICE_SCHEDULES || stopReconciling) return;
      const onFire = (status: string) => metrics.scheduleFires.inc({ status });
      backend.scheduleConsumer().start(createScheduleFirer({ store, scheduler, runControl: runs, logger, onFire, sessions: fireSessions }));
      stopReconciling = startReconciling(store, scheduler, logger);
    },
    startExpiring() {
      if (config.SERVICE_SESSION_TTL === 0 || stopExpiring) return;
      stopExpiring = startExpiring({
        store,
        ttlMs: config.SERVICE_SESSION_TTL,
        logger,
        onExpired: (count) => metrics.sessionsExpired.inc(count),
      });
    },
    async close() {
      stopReconciling?.();
      stopExpiring?.();
      for (const stop of stopWorkers.splice(0)) stop();
      await webhooks.close();
      await temporarySessions.close();
      await backend.close();
    },
  };
}

/** Redis (and BullMQ) when REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is set, memory otherwise. */
function createBackend(config: Config, fairShare: FairShare, logger: Logger, onUnconfirmedWrite: () => void): Backend {
  const limits = {
    ...DEFAULT_STORAGE_LIMITS,
    maxStateBytes: config.SERVICE_MAX_STATE_BYTES,
    maxStateKeys: config.SERVICE_MAX_STATE_KEYS,
    checkpointsRetain: config.SERVICE_CHECKPOINTS_RETAIN,
  };
  const assistantLimits = { maxPerTenant: config.SERVICE_ASSISTANTS_MAX, maxVersions: config.SERVICE_ASSISTANT_VERSIONS_MAX, maxTenantBytes: config.SERVICE_ASSISTANTS_MAX_BYTES };
  const webhookRetry = { attempts: WEBHOOK_ATTEMPTS, backoffMs: config.SERVICE_WEBHOOK_BACKOFF_MS };
  const webhookSlots = { concurrency: config.WORKER_WEBHOOK_CONCURRENCY, perTenant: config.WORKER_WEBHOOK_PER_TENANT };
  if (!config.redis) {
    return createMemoryBackend({
      limits,
      graphItemsMaxBytes: config.SERVICE_LANGGRAPH_STORE_MAX_BYTES,
      assistantLimits,
      eventsRetain: config.SERVICE_EVENTS_RETAIN,
      eventsMaxBytes: config.SERVICE_EVENTS_MAX_BYTES,
      eventsRunMaxBytes: config.SERVICE_EVENTS_RUN_MAX_BYTES,
      concurrency: config.WORKER_CONCURRENCY,
      fairShare,
      shutdownTimeoutMs: config.SERVICE_SHUTDOWN_TIMEOUT_MS,
      webhookRetry,
      webhookSlots,
    });
  }
  return createRedisBackend({
    limits,
    graphItemsMaxBytes: config.SERVICE_LANGGRAPH_STORE_MAX_BYTES,
    assistantLimits,
    connection: config.redis,
    keyPrefix: config.SERVICE_KEY_PREFIX,
    eventsRetain: config.SERVICE_EVENTS_RETAIN,
    eventsMaxBytes: config.SERVICE_EVENTS_MAX_BYTES,
    eventsRunMaxBytes: config.SERVICE_EVENTS_RUN_MAX_BYTES,
    concurrency: config.WORKER_CONCURRENCY,
    fairShare,
    lockDurationMs: config.WORKER_STALLED_INTERVAL_MS,
    jobAttempts: config.RUN_JOB_ATTEMPTS,
    maxStalledCount: config.WORKER_MAX_STALLS,
    shutdownTimeoutMs: config.SERVICE_SHUTDOWN_TIMEOUT_MS,
    webhookRetry,
    webhookSlots,
    onError: (what, error) => logger.warn({ err: error }, what),
    onRecovered: (what) => logger.info(what),
    onUnconfirmedWrite,
  });
}
