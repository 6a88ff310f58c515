import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AgentQueueDepth, TenantQueueDepth } from '../ports/run-queue.js';
import type { StorageUsage } from '../ports/store.js';

/**
 * The label value that sums the tenants past the top N of the per-tenant queue gauges. Its
 * parentheses are outside what a tenant id may hold (`ID_PATTERN`), so a tenant named `other`
 * keeps a row of its own.
 */
export const OTHER_TENANTS = '(other)';

/**
 * The per-tenant rows of the queue gauges: the `top` tenants by queued + running (ties by
 * name, so a scrape's labels are stable), then one `(other)` row summing the rest (0 when none),
 * so a deployment of any number of tenants exports at most `top + 1` label values.
 */
export function tenantQueueRows(depths: readonly TenantQueueDepth[], top: number): TenantQueueDepth[] {
  const ranked = [...depths].sort((a, b) => b.queued + b.running - (a.queued + a.running) || (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
  const other = { tenant: OTHER_TENANTS, queued: 0, running: 0 };
  for (const rest of ranked.slice(top)) {
    other.queued += rest.queued;
    other.running += rest.running;
  }
  return [...ranked.slice(0, top), other];
}

/**
 * One read per scrape, shared by the gauges it serves: a scrape's gauges collect at once and
 * take the same read, kept for a second. A failed read (Redis down) gives undefined, which
 * leaves the gauges as they were; the scrape still answers.
 */
function scrapeRead<T>(read: () => Promise<T>): () => Promise<T | undefined> {
  let sampled: Promise<T | undefined> | undefined;
  return () =>
    (sampled ??= read()
      .catch(() => undefined)
      .finally(() => setTimeout(() => (sampled = undefined), 1_000).unref()));
}

/** prom-client defaults that break Prometheus naming rules. */
const LINTED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * The Prometheus metrics of one process, on a registry of its own (so several apps in one
 * test process never collide). Names and labels are those the README lists (*Probes, metrics, console*).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'agentplane_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'agentplane_http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly sseConnections = new Gauge({
    name: 'agentplane_sse_connections',
    help: 'Open server-sent event streams on this process.',
    registers: [this.registry],
  });
  readonly waitsHeld = new Gauge({
    name: 'agentplane_waits_held',
    help: 'Requests held on this process until their run stops (POST /api/runs/wait, an approval answer with wait_ms).',
    registers: [this.registry],
  });
  readonly eventsPublished = new Counter({
    name: 'agentplane_events_published_total',
    help: 'Run events published by this process, by type.',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly runs = new Counter({
    name: 'agentplane_runs_total',
    help: 'Runs that reached a status on this process, by agent and status.',
    labelNames: ['agent_id', 'status'] as const,
    registers: [this.registry],
  });
  readonly approvalsPending: Gauge;
  readonly scheduleFires = new Counter({
    name: 'agentplane_schedule_fires_total',
    help: 'Schedule fires handled by this process, by outcome.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly sessionsExpired = new Counter({
    name: 'agentplane_sessions_expired_total',
    help: 'Sessions removed by this process for being idle past SERVICE_SESSION_TTL.',
    registers: [this.registry],
  });
  readonly runsStuck = new Gauge({
    name: 'agentplane_runs_stuck',
    help: 'Runs the reaper found queued or running with no job to execute them at its last pass (it ended each as failed).',
    registers: [this.registry],
  });
  readonly unconfirmedWrites = new Counter({
    name: 'agentplane_redis_unconfirmed_writes_total',
    help: 'Writes that fewer Redis replicas than REDIS_WAIT_REPLICAS confirmed in time; their requests answered 503 (each write may or may not persist).',
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'agentplane_rate_limited_total',
    help: 'Requests refused with 429, by limiter (global, key, tenant).',
    labelNames: ['limiter'] as const,
    registers: [this.registry],
  });

  /**
   * @param options.pendingApprovals read at each scrape for `agentplane_approvals_pending`
   * @param options.defaultMetrics prom-client's process metrics. @defaultValue true
   * @param options.backendMemory whether the backend has memory of its own to report (Redis);
   *   the in-memory store lives in the process's heap, so `agentplane_storage_memory_bytes` is
   *   left out there rather than reading 0. @defaultValue true
   */
  readonly storageMemory: Gauge | undefined;
  readonly storageItems: Gauge;

  /**
   * @param options.tenantQueues the run queue's per-tenant depths, read at each scrape for
   *   `agentplane_tenant_runs_queued` and `agentplane_tenant_runs_running`, labelled for the
   *   `top` busiest tenants plus `(other)`; left out when absent or `top` is 0.
   * @param options.agentQueues the run queue's capped agents, read at each scrape for
   *   `agentplane_agent_runs_running`, `agentplane_agent_runs_waiting` and
   *   `agentplane_agent_runs_max`; left out when absent (no agent capped).
   */
  constructor(
    options: {
      defaultMetrics?: boolean;
      pendingApprovals?: () => Promise<number>;
      usage?: () => Promise<StorageUsage>;
      backendMemory?: boolean;
      tenantQueues?: { top: number; depths: () => Promise<TenantQueueDepth[]> };
      agentQueues?: () => Promise<AgentQueueDepth[]>;
    } = {},
  ) {
    const pending = options.pendingApprovals;
    // One read of the backend serves both gauges of a scrape (INFO, DBSIZE and a ZCARD per tenant).
    const usage = options.usage;
    const sample = usage ? scrapeRead(usage) : async () => undefined;
    this.storageMemory =
      (options.backendMemory ?? true)
        ? new Gauge({
            name: 'agentplane_storage_memory_bytes',
            help: 'Memory the storage backend uses (Redis used_memory, sampled at scrape).',
            registers: [this.registry],
            async collect() {
              const usage = await sample();
              if (usage?.memoryBytes !== undefined && Number.isFinite(usage.memoryBytes)) this.set(usage.memoryBytes);
            },
          })
        : undefined;
    this.storageItems = new Gauge({
      name: 'agentplane_storage_items',
      help: 'What the storage holds, by kind: sessions and schedules (all tenants), keys (Redis DBSIZE, queues included).',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      async collect() {
        const usage = await sample();
        if (!usage) return;
        this.set({ kind: 'sessions' }, usage.sessions);
        this.set({ kind: 'schedules' }, usage.schedules);
        if (usage.keys !== undefined) this.set({ kind: 'keys' }, usage.keys);
      },
    });
    this.approvalsPending = new Gauge({
      name: 'agentplane_approvals_pending',
      help: 'Approval requests waiting for a decision, across tenants.',
      registers: [this.registry],
      async collect() {
        if (pending) this.set(await pending());
      },
    });
    if (options.tenantQueues && options.tenantQueues.top > 0) this.tenantQueueGauges(options.tenantQueues);
    if (options.agentQueues) this.agentQueueGauges(options.agentQueues);
    if (options.defaultMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry });
      // Gauges named like counters (`_total`), which `promtool check metrics` flags; the same
      // counts are in nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
      for (const name of LINTED_DEFAULTS) this.registry.removeSingleMetric(name);
    }
  }

  /** The two per-tenant queue gauges, from one read of the depths per scrape (on Redis, the counts every process shares). */
  private tenantQueueGauges(queues: { top: number; depths: () => Promise<TenantQueueDepth[]> }): void {
    const gauge = this.rowGauges('tenant', scrapeRead(async () => tenantQueueRows(await queues.depths(), queues.top)), (row) => row.tenant);
    gauge(
      'agentplane_tenant_runs_queued',
      'Runs waiting for a worker slot (delayed starts included), for the busiest tenants (SERVICE_METRICS_TENANTS) and "(other)" summing the rest.',
      (row) => row.queued,
    );
    gauge(
      'agentplane_tenant_runs_running',
      'Runs admitted to worker slots, for the busiest tenants (SERVICE_METRICS_TENANTS) and "(other)" summing the rest.',
      (row) => row.running,
    );
  }

  /**
   * The three per-agent gauges of the capped agents, from one read per scrape (on Redis, the
   * counts every process shares). Their labels are the capped agents, which the operator's
   * configuration bounds.
   */
  private agentQueueGauges(depths: () => Promise<AgentQueueDepth[]>): void {
    const gauge = this.rowGauges('agent_id', scrapeRead(depths), (row) => row.agent);
    gauge('agentplane_agent_runs_running', 'Runs of the agent admitted to worker slots, all tenants, for the agents with a concurrency cap.', (row) => row.running);
    gauge(
      'agentplane_agent_runs_waiting',
      'Runs of the agent waiting because it is at its concurrency cap (still queued), all tenants, for the agents with a cap.',
      (row) => row.waiting,
    );
    gauge('agentplane_agent_runs_max', 'The concurrency cap of the agent (maxConcurrency, SERVICE_AGENT_MAX_RUNNING), for the agents with a cap.', (row) => row.max);
  }

  /**
   * A maker of gauges with one label, each series a row of the same sample of a scrape: a row
   * gone from the sample loses its series; a sample that did not come back keeps the last values.
   */
  private rowGauges<Row>(label: string, sample: () => Promise<Row[] | undefined>, labelOf: (row: Row) => string) {
    const registry = this.registry;
    return (name: string, help: string, value: (row: Row) => number) =>
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers: [registry],
        async collect() {
          const rows = await sample();
          if (!rows) return;
          this.reset();
          for (const row of rows) this.set({ [label]: labelOf(row) }, value(row));
        },
      });
  }
}
