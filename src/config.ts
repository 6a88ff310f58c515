import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseApiKeys, type ApiKeyEntry } from './domain/api-key-entries.js';
import { DEFAULT_SCHEDULES_PER_TENANT } from './domain/schedule-cap.js';
import { DEFAULT_FAIR_SHARE, type FairShare } from './domain/fair-share.js';
import { DEFAULT_WEBHOOK_BACKOFF_MS, DEFAULT_WEBHOOK_SLOTS, DEFAULT_WEBHOOK_TIMEOUT_MS } from './domain/run-webhook.js';
import { standardWebhooksKey } from './domain/standard-webhooks.js';
import { DEFAULT_ASSISTANT_LIMITS, DEFAULT_EVENT_RETENTION, DEFAULT_GRAPH_ITEMS_MAX_BYTES, DEFAULT_STORAGE_LIMITS, ID_PATTERN, MIN_EVENTS_BYTES } from './domain/types.js';
import { addressList } from './domain/address-list.js';
import { hostPortList, redisConnectionOf, type RedisConnection } from './config-redis.js';

/**
 * Proxies whose X-Forwarded-For counts when SERVICE_TRUSTED_PROXIES is not set: loopback and the
 * private ranges, where ingress controllers and container networks live.
 */
export const DEFAULT_TRUSTED_PROXIES: readonly string[] = ['127.0.0.0/8', '::1', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'];

/** A rate in the `N/window` form (`600/60s`, `20/1m`: N requests per window of s, m or h), or off. */
export interface Rate {
  points: number;
  durationSec: number;
}

const WINDOW_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 };

function parseRate(name: string, raw: string | undefined, fallback: Rate | null): Rate | null {
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'off') return null;
  const match = /^(\d+)\/(\d+)(s|m|h)$/.exec(raw);
  if (!match) throw new ConfigError(name, `expected N/window such as 600/60s, or off; got "${raw}"`);
  const points = Number(match[1]);
  const durationSec = Number(match[2]) * WINDOW_UNITS[match[3]!]!;
  if (points < 1 || durationSec < 1) throw new ConfigError(name, 'N and the window must be at least 1');
  return { points, durationSec };
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid configuration: ${variable}: ${detail}`);
    this.name = 'ConfigError';
  }
}

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));
const list = z
  .string()
  .optional()
  .transform((v) => (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''));

/** A duration in seconds: `0` (off), `3600`, or with a unit: `90s`, `30m`, `12h`, `30d`. Parsed to ms. */
const duration = z
  .string()
  .regex(/^\d+(s|m|h|d)?$/, { error: 'expected a duration such as 3600, 30m, 12h or 30d (0 turns it off)' })
  .transform((v) => {
    const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[v.at(-1) as 's'] ?? 1;
    return Number.parseInt(v, 10) * unit * 1000;
  });

/** An entry of SERVICE_ALLOWED_HOSTS: a DNS name or IPv4 address, or an IPv6 address in brackets. */
const HOST_NAME = /^([A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])$/;

const envSchema = z.object({
  // Unset: every interface with authentication on, loopback with SERVICE_AUTH=none (loadConfig).
  SERVICE_HOST: optionalString,
  // Host names answered beside the loopback ones; `*` any. Unset: any with authentication on, loopback only without.
  SERVICE_ALLOWED_HOSTS: list.superRefine((names, ctx) => {
    if (names.includes('*') && names.length > 1) ctx.addIssue({ code: 'custom', message: 'expected * alone, or host names' });
    const bad = names.find((name) => name !== '*' && !HOST_NAME.test(name));
    if (bad !== undefined) ctx.addIssue({ code: 'custom', message: `expected host names without a port or scheme, such as api.example.com or [fd00::1]; got "${bad}"` });
  }),
  SERVICE_PORT: int(0, 65535).default(8420),
  // The value is never echoed: it may carry a password.
  REDIS_URL: optionalString.pipe(
    z
      .url({ protocol: /^rediss?$/, error: 'expected a URL starting with redis:// or rediss://, such as redis://localhost:6379' })
      .optional(),
  ),
  REDIS_CLUSTER_NODES: hostPortList,
  REDIS_SENTINELS: hostPortList,
  REDIS_SENTINEL_NAME: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/).default('mymaster'),
  REDIS_USERNAME: optionalString,
  REDIS_PASSWORD: optionalString,
  REDIS_SENTINEL_PASSWORD: optionalString,
  REDIS_TLS: bool.default(false),
  REDIS_SENTINEL_TLS: bool.default(false),
  REDIS_TLS_CA_FILE: optionalString,
  REDIS_WAIT_REPLICAS: int(0, 100).default(0),
  REDIS_WAIT_TIMEOUT_MS: int(1, 60_000).default(1_000),
  SERVICE_KEY_PREFIX: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).default('agentplane'),
  SERVICE_MAX_BODY_BYTES: int(1).default(1024 * 1024),
  SERVICE_MAX_STATE_BYTES: int(1).default(DEFAULT_STORAGE_LIMITS.maxStateBytes),
  SERVICE_MAX_STATE_KEYS: int(1).default(DEFAULT_STORAGE_LIMITS.maxStateKeys),
  SERVICE_CHECKPOINTS_RETAIN: int(1).default(DEFAULT_STORAGE_LIMITS.checkpointsRetain),
  // At least 1: the cap keeps one tenant's graphs from filling Redis (or the process); no value turns it off.
  SERVICE_LANGGRAPH_STORE_MAX_BYTES: int(1).default(DEFAULT_GRAPH_ITEMS_MAX_BYTES),
  // At least 1 each: a tenant's assistants and their versions are bounded, as every store of a tenant is.
  SERVICE_ASSISTANTS_MAX: int(1).default(DEFAULT_ASSISTANT_LIMITS.maxPerTenant),
  SERVICE_ASSISTANT_VERSIONS_MAX: int(1).default(DEFAULT_ASSISTANT_LIMITS.maxVersions),
  SERVICE_ASSISTANTS_MAX_BYTES: int(1).default(DEFAULT_ASSISTANT_LIMITS.maxTenantBytes),
  SERVICE_MAX_PAGE_BYTES: int(1024).default(4 * 1024 * 1024),
  SERVICE_SESSION_TTL: duration.default(0),
  SERVICE_REQUEST_TIMEOUT_MS: int(1000).default(30_000),
  SERVICE_SSE_MAX_PER_PRINCIPAL: int(0).default(20),
  SERVICE_SSE_MAX_PER_TENANT: int(0).default(500),
  SERVICE_WAIT_MAX_PER_PRINCIPAL: int(0).default(500),
  SERVICE_SWAGGER: bool.default(true),
  SERVICE_CONSOLE: bool.default(true),
  SERVICE_EXAMPLES: bool.default(false),
  SERVICE_APPROVALS: bool.default(true),
  SERVICE_SCHEDULES: bool.default(true),
  SERVICE_SCHEDULES_MAX_PER_TENANT: int(1).default(DEFAULT_SCHEDULES_PER_TENANT),
  // Fair share of the worker slots (0: no cap); SERVICE_TENANTS: per-tenant overrides and weights (JSON).
  SERVICE_TENANT_MAX_QUEUED: int(0).default(DEFAULT_FAIR_SHARE.defaults.maxQueued),
  SERVICE_TENANT_MAX_RUNNING: int(0).default(DEFAULT_FAIR_SHARE.defaults.maxRunning),
  SERVICE_TENANTS: optionalString,
  // Most runs of an agent running at once, by agent id ("agentA:2,agentB:5"), over the agents' own maxConcurrency.
  SERVICE_AGENT_MAX_RUNNING: optionalString,
  // Tenants labelled in the per-tenant queue gauges (the busiest; the rest summed as "(other)"); 0: no such gauges.
  SERVICE_METRICS_TENANTS: int(0, 1000).default(10),
  SERVICE_SSE_HEARTBEAT_MS: int(10).default(15_000),
  SERVICE_EVENTS_RETAIN: int(1).default(DEFAULT_EVENT_RETENTION.count),
  SERVICE_EVENTS_MAX_BYTES: int(MIN_EVENTS_BYTES).default(DEFAULT_EVENT_RETENTION.bytes),
  SERVICE_EVENTS_RUN_MAX_BYTES: int(MIN_EVENTS_BYTES).default(DEFAULT_EVENT_RETENTION.runBytes),
  SERVICE_SHUTDOWN_DELAY_MS: int(0).default(2_000),
  SERVICE_SHUTDOWN_TIMEOUT_MS: int(0).default(25_000),
  SERVICE_REPLICA_ID: optionalString,
  SERVICE_AUTH: z.enum(['none', 'jwt', 'apikey']).default('none'),
  SERVICE_RBAC: bool.default(false),
  SERVICE_JWT_SECRET: optionalString,
  SERVICE_JWT_ISSUER: optionalString,
  SERVICE_JWT_AUDIENCE: optionalString,
  SERVICE_JWT_JWKS_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  SERVICE_JWT_PUBLIC_KEY: optionalString,
  SERVICE_JWT_TRUSTED_ISSUERS: list,
  SERVICE_JWT_TENANT_CLAIM: z.string().min(1).default('tenant_id'),
  SERVICE_JWT_DEFAULT_TENANT: optionalString.pipe(z.string().regex(ID_PATTERN).optional()),
  SERVICE_JWT_MAX_AGE: duration.default(86_400_000),
  SERVICE_API_KEYS: optionalString,
  SERVICE_API_KEY_HEADER: z.string().regex(/^[A-Za-z0-9-]+$/).default('X-Api-Key'),
  SERVICE_RATE_LIMIT: z.string().optional(),
  SERVICE_QUOTA_PER_KEY: z.string().optional(),
  SERVICE_QUOTA_PER_TENANT: z.string().optional(),
  SERVICE_TRUST_PROXY: bool.default(false),
  SERVICE_TRUSTED_PROXIES: list.transform((v) => (v.length > 0 ? v : DEFAULT_TRUSTED_PROXIES)).superRefine((entries, ctx) => {
    try {
      addressList(entries);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  }),
  // The value is never echoed. Standard Webhooks secrets are 24 to 64 random bytes; fewer fail closed.
  SERVICE_WEBHOOK_SIGNING_SECRET: optionalString.superRefine((secret, ctx) => {
    if (secret === undefined) return;
    let key: Buffer;
    try {
      key = standardWebhooksKey(secret);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return;
    }
    if (key.length < 24) ctx.addIssue({ code: 'custom', message: `expected at least 24 bytes once decoded (whsec_ and base64 of 24 to 64 random bytes); got ${key.length}` });
  }),
  SERVICE_WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  SERVICE_WEBHOOK_BACKOFF_MS: int(1, 3_600_000).default(DEFAULT_WEBHOOK_BACKOFF_MS),
  SERVICE_WEBHOOK_TIMEOUT_MS: int(100, 600_000).default(DEFAULT_WEBHOOK_TIMEOUT_MS),
  WORKER_PORT: int(0, 65535).default(8421),
  WORKER_CONCURRENCY: int(1, 1000).default(8),
  WORKER_STALLED_INTERVAL_MS: int(1000).default(30_000),
  WORKER_MAX_STALLS: int(0, 1000).default(5),
  WORKER_WEBHOOK_CONCURRENCY: int(1, 1000).default(DEFAULT_WEBHOOK_SLOTS.concurrency),
  // Above WORKER_WEBHOOK_CONCURRENCY it is that: one tenant may then take every slot.
  WORKER_WEBHOOK_PER_TENANT: int(1, 1000).default(DEFAULT_WEBHOOK_SLOTS.perTenant),
  RUN_STEP_LIMIT: int(1).default(100),
  RUN_TIMEOUT_MS: int(0).default(0),
  RUN_JOB_ATTEMPTS: int(1, 100).default(10),
  RUN_REAPER_INTERVAL_MS: int(1000).default(30_000),
  AGENTS_MODULE: optionalString,
  SERVICE_LANGGRAPH_JSON: optionalString,
  // LangGraph's meaning: per-graph default config and context, as JSON. A value that is not a
  // JSON object is agentplane's old name of SERVICE_LANGGRAPH_JSON (loadConfig moves it there).
  LANGGRAPH_CONFIG: optionalString,
  SERVICE_CORS_ORIGINS: optionalString.pipe(
    z
      .string()
      .regex(/^(\*|off|[^,\s]+(\s*,\s*[^,\s]+)*)$/, { error: 'expected *, off, or a comma-separated list of origins such as https://app.example.com' })
      .optional(),
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
});

type Env = z.infer<typeof envSchema>;

/** Every environment variable agentplane reads (deployment files are checked against it). */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));

/** The schema of those variables: the settings reference (`npm run docs:settings`) is rendered from it. */
export const CONFIG_SCHEMA = envSchema;

export type { ApiKeyEntry };

export interface Config extends Omit<Env, 'SERVICE_HOST' | 'SERVICE_RATE_LIMIT' | 'SERVICE_QUOTA_PER_KEY' | 'SERVICE_QUOTA_PER_TENANT' | 'SERVICE_API_KEYS'> {
  /** As set, else `0.0.0.0` with authentication on and `127.0.0.1` with SERVICE_AUTH=none. */
  SERVICE_HOST: string;
  /** Global limit per client address; null when off. */
  rateLimit: Rate | null;
  quotaPerKey: Rate | null;
  quotaPerTenant: Rate | null;
  apiKeys: readonly ApiKeyEntry[];
  /**
   * How tenants share the worker slots (SERVICE_TENANT_MAX_QUEUED, SERVICE_TENANT_MAX_RUNNING,
   * SERVICE_TENANTS); its `agents` are the caps of SERVICE_AGENT_MAX_RUNNING (0 lifts one), which
   * the composition root lays over the agents' own.
   */
  fairShare: FairShare;
  /** Redis of every process (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS); undefined in the embedded mode. */
  redis: RedisConnection | undefined;
  /**
   * Set when SERVICE_LANGGRAPH_JSON came from LANGGRAPH_CONFIG holding a path (agentplane's old
   * name of the setting): the processes log a warning saying to rename it.
   */
  legacyLangGraphConfig?: true;
}

/** LANGGRAPH_CONFIG as LangGraph reads it: a JSON object (per-graph default config and context), not a path. */
export const isLangGraphConfigJson = (value: string | undefined): boolean => value !== undefined && value.trimStart().startsWith('{');

/** The warning a process logs when LANGGRAPH_CONFIG named the langgraph.json (the old name of SERVICE_LANGGRAPH_JSON). */
export const LEGACY_LANGGRAPH_CONFIG_WARNING =
  'LANGGRAPH_CONFIG names a langgraph.json: that is the old name of SERVICE_LANGGRAPH_JSON, read for one more release; rename it (LANGGRAPH_CONFIG means what it means to LangGraph: per-graph default config and context as JSON)';

/**
 * SERVICE_LANGGRAPH_JSON as the file to read: a project's folder stands for the langgraph.json in
 * it (as `langgraph dev` run in that folder reads it); a folder without one is a ConfigError
 * that names the file to set. Anything else is left for the graphs' loader to check.
 */
function langgraphJsonFile(setting: string): string {
  if (!statSync(setting, { throwIfNoEntry: false })?.isDirectory()) return setting;
  const file = join(setting, 'langgraph.json');
  if (existsSync(file)) return file;
  throw new ConfigError('SERVICE_LANGGRAPH_JSON', `${setting} is a folder with no langgraph.json in it: set SERVICE_LANGGRAPH_JSON to the project's langgraph.json (e.g. ${file})`);
}

/**
 * Reads and validates the environment once. Throws {@link ConfigError} naming the first bad
 * variable; the entry points print it and exit 1. The result is frozen.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  const { SERVICE_RATE_LIMIT, SERVICE_QUOTA_PER_KEY, SERVICE_QUOTA_PER_TENANT, SERVICE_API_KEYS, ...rest } =
    parsed.data;
  const config: Config = {
    ...rest,
    rateLimit: parseRate('SERVICE_RATE_LIMIT', SERVICE_RATE_LIMIT, { points: 1200, durationSec: 60 }),
    // Without authentication, whoever reaches the port may do anything: only this machine, unless said otherwise.
    SERVICE_HOST: rest.SERVICE_HOST ?? (rest.SERVICE_AUTH === 'none' ? '127.0.0.1' : '0.0.0.0'),
    quotaPerKey: parseRate('SERVICE_QUOTA_PER_KEY', SERVICE_QUOTA_PER_KEY, null),
    quotaPerTenant: parseRate('SERVICE_QUOTA_PER_TENANT', SERVICE_QUOTA_PER_TENANT, null),
    apiKeys: [],
    fairShare: fairShareOf(rest),
    redis: redisConnectionOf(parsed.data, (variable, detail) => {
      throw new ConfigError(variable, detail);
    }),
  };
  if (config.SERVICE_LANGGRAPH_JSON === undefined && config.LANGGRAPH_CONFIG !== undefined && !isLangGraphConfigJson(config.LANGGRAPH_CONFIG)) {
    config.SERVICE_LANGGRAPH_JSON = config.LANGGRAPH_CONFIG;
    config.legacyLangGraphConfig = true;
  }
  if (config.SERVICE_LANGGRAPH_JSON !== undefined) config.SERVICE_LANGGRAPH_JSON = langgraphJsonFile(config.SERVICE_LANGGRAPH_JSON);
  validateAuth(config, SERVICE_API_KEYS);
  try {
    config.apiKeys = parseApiKeys(SERVICE_API_KEYS);
  } catch (error) {
    throw new ConfigError('SERVICE_API_KEYS', (error as Error).message);
  }
  return Object.freeze(config);
}

const tenantShareSchema = z.strictObject({
  weight: z.number().int().min(1).max(100).optional(),
  max_running: z.number().int().min(0).optional(),
  max_queued: z.number().int().min(0).optional(),
});

/** The admission settings: the defaults, and SERVICE_TENANTS (`{"<tenant>": {"weight", "max_running", "max_queued"}}`) over them. */
function fairShareOf(env: Pick<Env, 'SERVICE_TENANT_MAX_QUEUED' | 'SERVICE_TENANT_MAX_RUNNING' | 'SERVICE_TENANTS' | 'SERVICE_AGENT_MAX_RUNNING'>): FairShare {
  const defaults = { ...DEFAULT_FAIR_SHARE.defaults, maxQueued: env.SERVICE_TENANT_MAX_QUEUED, maxRunning: env.SERVICE_TENANT_MAX_RUNNING };
  const agents = agentMaxRunningOf(env.SERVICE_AGENT_MAX_RUNNING);
  if (env.SERVICE_TENANTS === undefined) return { defaults, tenants: {}, agents };
  let json: unknown;
  try {
    json = JSON.parse(env.SERVICE_TENANTS);
  } catch {
    throw new ConfigError('SERVICE_TENANTS', 'expected a JSON object such as {"acme": {"weight": 2, "max_running": 8, "max_queued": 5000}}');
  }
  const parsed = z.record(z.string().regex(ID_PATTERN), tenantShareSchema).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError('SERVICE_TENANTS', `${issue.path.join('.') || 'the value'}: ${issue.message}`);
  }
  const tenants = Object.fromEntries(
    Object.entries(parsed.data).map(([tenant, share]) => [
      tenant,
      {
        ...(share.weight === undefined ? {} : { weight: share.weight }),
        ...(share.max_running === undefined ? {} : { maxRunning: share.max_running }),
        ...(share.max_queued === undefined ? {} : { maxQueued: share.max_queued }),
      },
    ]),
  );
  return { defaults, tenants, agents };
}

/** SERVICE_AGENT_MAX_RUNNING: `<agent id>:<runs>` pairs, comma-separated (an id may hold ":", the last one splits). */
function agentMaxRunningOf(setting: string | undefined): Record<string, number> {
  const caps: Record<string, number> = {};
  for (const pair of (setting ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.lastIndexOf(':');
    const id = pair.slice(0, at);
    const runs = pair.slice(at + 1);
    if (at < 1 || !ID_PATTERN.test(id) || !/^\d{1,9}$/.test(runs)) {
      throw new ConfigError('SERVICE_AGENT_MAX_RUNNING', `"${pair}" is not <agent id>:<most runs at once>; expected e.g. "researcher:2,writer:5" (0 for no cap)`);
    }
    caps[id] = Number(runs);
  }
  return caps;
}

function validateAuth(config: Config, apiKeys: string | undefined): void {
  if (config.SERVICE_AUTH === 'jwt' && !config.SERVICE_JWT_SECRET && !config.SERVICE_JWT_JWKS_URL && !config.SERVICE_JWT_PUBLIC_KEY) {
    throw new ConfigError(
      'SERVICE_JWT_SECRET',
      'SERVICE_AUTH=jwt needs SERVICE_JWT_SECRET, SERVICE_JWT_JWKS_URL or SERVICE_JWT_PUBLIC_KEY',
    );
  }
  if (config.SERVICE_AUTH === 'apikey' && !apiKeys) {
    throw new ConfigError('SERVICE_API_KEYS', 'SERVICE_AUTH=apikey needs at least one key');
  }
}

/**
 * Entry-point helper: runs a start-up step; a ConfigError (a setting that cannot work, found
 * while building a component) prints its one-line reason and exits 1, like a bad variable.
 */
export function exitOnConfigError<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Entry-point helper: load the config or print the reason and exit 1. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  return exitOnConfigError(() => loadConfig(env));
}
