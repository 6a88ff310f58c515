import { AppError } from './errors.js';

/** How a tenant shares the worker slots with the others. */
export interface TenantShare {
  /** Runs admitted per turn of the tenant ring (a weight of 2 gets twice the slots of 1 under contention). */
  weight: number;
  /** Most runs of the tenant admitted (running) at once; 0 for no cap beyond the fair share. */
  maxRunning: number;
  /** Most runs of the tenant waiting for a slot; a start past it is refused (429). 0 for no cap. */
  maxQueued: number;
}

/**
 * The admission rule's settings: every tenant's share, with overrides by tenant name
 * (SERVICE_TENANT_MAX_QUEUED, SERVICE_TENANT_MAX_RUNNING, SERVICE_TENANTS), and the agents whose
 * runs are capped (an agent's `maxConcurrency`, SERVICE_AGENT_MAX_RUNNING over it).
 */
export interface FairShare {
  defaults: TenantShare;
  tenants: Readonly<Record<string, Partial<TenantShare>>>;
  /**
   * Most runs of an agent admitted at once, all tenants together, by agent id; an agent absent
   * or at 0 has no cap. A run of an agent at its cap stays queued until one of its runs ends.
   * @defaultValue {} (no agent capped)
   */
  agents?: Readonly<Record<string, number>>;
}

/** A shared deployment's defaults: equal weights, no running cap beyond the fair share, 1,000 queued runs per tenant. */
export const DEFAULT_FAIR_SHARE: FairShare = Object.freeze({
  defaults: Object.freeze({ weight: 1, maxRunning: 0, maxQueued: 1000 }),
  tenants: Object.freeze({}),
});

/** Seconds a start refused for a full queue is told to wait (Retry-After). */
export const QUEUE_FULL_RETRY_AFTER_S = 5;

/** Most runs of the agent admitted at once (all tenants together); 0 for no cap. */
export function agentCapOf(fair: FairShare, agentId: string): number {
  return fair.agents?.[agentId] ?? 0;
}

/** Whether any agent has a cap: without one, the admission reads no job's agent. */
export function capsAgents(fair: FairShare): boolean {
  return Object.values(fair.agents ?? {}).some((cap) => cap > 0);
}

/** The capped agents and their caps, by agent id. */
export function cappedAgents(fair: FairShare): [agent: string, cap: number][] {
  return Object.entries(fair.agents ?? {})
    .filter(([, cap]) => cap > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The agent caps of a deployment: each agent's own (`maxConcurrency` of its definition, the
 * graph's `max_concurrency` in langgraph.json), the operator's overrides by agent id
 * (SERVICE_AGENT_MAX_RUNNING, 0 lifting a cap) over them. Only the caps above 0.
 */
export function agentCaps(declared: Iterable<{ id: string; maxConcurrency?: number | undefined }>, overrides: Readonly<Record<string, number>> = {}): Record<string, number> {
  const caps: Record<string, number> = {};
  for (const agent of declared) if (agent.maxConcurrency !== undefined && agent.maxConcurrency > 0) caps[agent.id] = agent.maxConcurrency;
  for (const [id, cap] of Object.entries(overrides)) {
    if (cap > 0) caps[id] = cap;
    else delete caps[id];
  }
  return caps;
}

/** A tenant's share: its overrides over the defaults. */
export function shareOf(fair: FairShare, tenant: string): TenantShare {
  return { ...fair.defaults, ...fair.tenants[tenant] };
}

/**
 * The refusal of a start when the tenant already has `queued` runs waiting and its cap is
 * `maxQueued`: 429 `rate_limited` with Retry-After, before anything is stored.
 */
export function queueFull(queued: number, maxQueued: number): AppError {
  return new AppError(
    'rate_limited',
    `The tenant already has ${queued} runs waiting for a worker (its cap is ${maxQueued}); retry in ${QUEUE_FULL_RETRY_AFTER_S} s.`,
    { headers: { 'Retry-After': String(QUEUE_FULL_RETRY_AFTER_S) } },
  );
}

/** Where a tenant's queue stands: runs waiting for a slot (delayed ones included) and runs admitted. */
export interface TenantQueueDepth {
  tenant: string;
  queued: number;
  running: number;
}

/** Where a capped agent's runs stand, all tenants together: admitted, waiting because the agent is at its cap, and the cap. */
export interface AgentQueueDepth {
  agent: string;
  running: number;
  waiting: number;
  max: number;
}
