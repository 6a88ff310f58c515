import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.js';
import { WEBHOOK_CONFIG_VARIABLES, loadWebhooksConfig } from '../../src/integrations/webhook/config.js';
import { TRACING_VARIABLES, tracingRequested } from '../../src/observability/tracing.js';
import { CHAT_CONFIG_VARIABLES, loadChatConfig } from '../../src/integrations/gateway/config.js';

/*
 * Static checks of docker-compose.yml and .env.example: the file parses, every variable a
 * container gets is one its process reads, and with the documented settings every process
 * would start (its own config validation passes, Redis is set, auth secrets arrive). The file
 * is a Compose v2 file: `docker compose config` accepts it where the plugin is installed, and
 * it validates against the Compose Specification's JSON schema everywhere.
 */

const ROOT = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8');

type Role = 'api' | 'worker' | 'webhooks';
const ROLES: readonly string[] = ['api', 'worker', 'webhooks'];

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number | boolean>;
  ports?: string[];
  volumes?: string[];
  profiles?: string[];
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
  read_only?: boolean;
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const composeText = read('docker-compose.yml');
const compose = parse(composeText, { merge: true }) as ComposeFile;
const exampleSettings = parseEnvFile(read('.env.example'));

/** Services that run an agentplane process, by the command the image's entry point takes. */
const appServices = Object.entries(compose.services)
  .filter(([, service]) => ROLES.includes(service.command?.[0] ?? ''))
  .map(([name, service]) => ({ name, service, role: service.command![0] as Role }));
const apiServices = appServices.filter((s) => s.role === 'api');

/** `KEY=value` lines; blank lines and `#` comments skipped; anything else is an error. */
function parseEnvFile(text: string): Map<string, string> {
  const settings = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) throw new Error(`.env.example: not KEY=value: ${line}`);
    settings.set(match[1]!, match[2]!);
  }
  return settings;
}

const INTERPOLATION = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Compose's `${NAME}` and `${NAME:-default}` (default when unset or empty); other forms are refused. */
function interpolate(value: string, settings: ReadonlyMap<string, string>): string {
  if (value.replace(INTERPOLATION, '').includes('$')) throw new Error(`unsupported interpolation in "${value}"`);
  return value.replace(INTERPOLATION, (_match, name: string, fallback: string | undefined) => {
    const set = settings.get(name);
    return set !== undefined && set !== '' ? set : (fallback ?? '');
  });
}

/** The environment a container gets with `settings` as its .env. */
function containerEnv(service: ComposeService, settings: ReadonlyMap<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [name, interpolate(String(value), settings)]),
  );
}

function withSettings(overrides: Record<string, string>): Map<string, string> {
  return new Map([...exampleSettings, ...Object.entries(overrides)]);
}

function allowedVariables(role: Role): Set<string> {
  const shared = [...CONFIG_VARIABLES, ...TRACING_VARIABLES];
  if (role === 'api') return new Set([...shared, ...CHAT_CONFIG_VARIABLES]);
  return new Set(role === 'webhooks' ? [...shared, ...WEBHOOK_CONFIG_VARIABLES] : shared);
}

function seconds(duration: string): number {
  const match = /^(\d+)(ms|s|m)$/.exec(duration);
  if (!match) throw new Error(`unsupported duration ${duration}`);
  return Number(match[1]) * { ms: 0.001, s: 1, m: 60 }[match[2] as 'ms' | 's' | 'm'];
}

describe('docker-compose.yml', () => {
  it('runs redis, two API replicas, one worker and nginx, and the webhook receiver on request', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['redis', 'nginx']));
    expect(apiServices.map((s) => s.name)).toEqual(['api-1', 'api-2']);
    expect(appServices.filter((s) => s.role === 'worker')).toHaveLength(1);
    const webhooks = appServices.filter((s) => s.role === 'webhooks');
    expect(webhooks).toHaveLength(1);
    expect(webhooks[0]!.service.profiles).toEqual(['webhooks']);
  });

  it('keeps Redis in an append-only file on a named volume, with no eviction', () => {
    const redis = compose.services.redis!;
    const args = (redis.command ?? []).join(' ');
    expect(args).toContain('--appendonly yes');
    expect(args).toContain('--maxmemory-policy noeviction');
    expect(redis.volumes).toContain('redis-data:/data');
    expect(compose.volumes).toHaveProperty('redis-data');
  });

  it('gives every container only variables its process reads', () => {
    for (const { name, service, role } of appServices) {
      const allowed = allowedVariables(role);
      const unknown = Object.keys(service.environment ?? {}).filter((variable) => !allowed.has(variable));
      expect(unknown, `${name} sets variables its process does not read`).toEqual([]);
    }
  });

  it('starts every process with the .env.example settings: its config validates and Redis is set', () => {
    for (const { name, service, role } of appServices) {
      const env = containerEnv(service, exampleSettings);
      const config = loadConfig(env);
      expect(config.REDIS_URL, `${name} runs without Redis`).toBe('redis://redis:6379');
      if (role === 'webhooks') {
        // .env.example leaves the receiver's secret to the operator: until one is set it refuses to start.
        expect(() => loadWebhooksConfig(env), name).toThrow(/WEBHOOK_SECRET/);
        expect(() => loadWebhooksConfig(containerEnv(service, withSettings({ WEBHOOK_SECRET: 'hook-secret' }))), name).not.toThrow();
        expect(loadWebhooksConfig(containerEnv(service, withSettings({ WEBHOOK_INSECURE: 'true' }))).insecure, name).toBe(true);
      }
      if (role === 'api') {
        // The chat gateway is off until a bot token is set, and on with one and its secret.
        expect(loadChatConfig(env), name).toEqual({});
        const slack = loadChatConfig(containerEnv(service, withSettings({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'signing' }))).slack;
        expect(slack?.tenant, name).toBe('DefaultTenant');
      }
    }
  });

  it('listens on every interface of each container, with or without auth, an open webhook receiver included', () => {
    for (const { name, service, role } of appServices) {
      expect(loadConfig(containerEnv(service, exampleSettings)).SERVICE_HOST, name).toBe('0.0.0.0');
      if (role === 'webhooks') expect(loadWebhooksConfig(containerEnv(service, withSettings({ WEBHOOK_INSECURE: 'true' }))).host, name).toBe('0.0.0.0');
    }
  });

  it('passes the auth secrets to every process when auth is on', () => {
    const jwt = withSettings({ SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: 'a-long-enough-shared-secret-for-hs256' });
    const apikey = withSettings({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'k-1:admin:acme,k-2' });
    for (const { name, service } of appServices) {
      const jwtConfig = loadConfig(containerEnv(service, jwt));
      expect(jwtConfig.SERVICE_AUTH, name).toBe('jwt');
      expect(jwtConfig.SERVICE_JWT_SECRET, name).toBe('a-long-enough-shared-secret-for-hs256');
      const keyConfig = loadConfig(containerEnv(service, apikey));
      expect(keyConfig.SERVICE_AUTH, name).toBe('apikey');
      expect(keyConfig.apiKeys, name).toHaveLength(2);
    }
  });

  it('passes the webhook signing secret to the receiver', () => {
    const settings = withSettings({ WEBHOOK_SIGNATURE: 'github', WEBHOOK_SIGNING_SECRET: 'whsec-test' });
    const receiver = appServices.find((s) => s.role === 'webhooks')!;
    expect(loadWebhooksConfig(containerEnv(receiver.service, settings)).signatureScheme).toBe('github');
  });

  it('names each API replica and trusts the proxy in front of it', () => {
    const ids = apiServices.map(({ service }) => loadConfig(containerEnv(service, exampleSettings)).SERVICE_REPLICA_ID);
    expect(ids).toEqual(['api-1', 'api-2']);
    for (const { service } of apiServices) {
      expect(loadConfig(containerEnv(service, exampleSettings)).SERVICE_TRUST_PROXY).toBe(true);
    }
  });

  it('lets every process finish its drain before Docker kills it', () => {
    for (const { name, service } of appServices) {
      const drainMs = loadConfig(containerEnv(service, exampleSettings)).SERVICE_SHUTDOWN_TIMEOUT_MS;
      expect(service.stop_grace_period, name).toBeDefined();
      expect(seconds(service.stop_grace_period!) * 1000, name).toBeGreaterThan(drainMs);
    }
  });

  it('runs the processes from one read-only image after Redis is healthy', () => {
    const images = new Set(appServices.map(({ service }) => service.image));
    expect(images.size).toBe(1);
    for (const { name, service } of appServices) {
      expect(service.read_only, name).toBe(true);
      expect(service.depends_on?.redis?.condition, name).toBe('service_healthy');
    }
  });

  it('puts nginx, with the shared configuration, in front of exactly the API replicas', () => {
    const nginx = compose.services.nginx!;
    expect(nginx.volumes).toContain('./deploy/nginx:/etc/nginx/agentplane:ro');
    expect(nginx.command).toEqual(['nginx', '-c', '/etc/nginx/agentplane/agentplane.conf']);
    const upstreams = [...read('deploy/nginx/upstream.conf').matchAll(/^\s*server\s+([^\s;]+)/gm)].map((m) => m[1]);
    const replicas = apiServices.map(
      ({ name, service }) => `${name}:${loadConfig(containerEnv(service, exampleSettings)).SERVICE_PORT}`,
    );
    expect(upstreams).toEqual(replicas);
    const listen = /^\s*listen\s+(\d+);/m.exec(read('deploy/nginx/server.conf'))?.[1];
    expect(nginx.ports?.map((port) => interpolate(port, exampleSettings))).toEqual([`8420:${listen}`]);
    expect(Object.keys(nginx.depends_on ?? {}).sort()).toEqual(apiServices.map((s) => s.name).sort());
  });
});

describe('docker-compose.yml: OpenTelemetry', () => {
  /** The OTEL_* lines of the guide's recipes (Langfuse, LangSmith, Jaeger): `OTEL_…=…` at a line's start in a code block. */
  const guideVariables = new Set([...read('docs/guides/observability.md').matchAll(/^(OTEL_[A-Z_]+)=/gm)].map((m) => m[1]!));
  const forwarded = [
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_EXPORTER_OTLP_HEADERS',
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
    'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    'OTEL_SERVICE_NAME',
    'OTEL_RESOURCE_ATTRIBUTES',
    'OTEL_TRACES_SAMPLER',
    'OTEL_TRACES_SAMPLER_ARG',
  ];

  it("forwards the endpoints, headers, protocols, resource and sampler to every process, the guide's recipes' variables among them", () => {
    expect(guideVariables.size).toBeGreaterThanOrEqual(3);
    for (const { name, service } of appServices) {
      const env = containerEnv(service, exampleSettings);
      for (const variable of new Set([...forwarded, ...guideVariables])) expect(env, `${name} does not get ${variable}`).toHaveProperty(variable);
    }
  });

  it('leaves tracing off with the .env.example settings (every OTEL_* variable empty)', () => {
    for (const { name, service } of appServices) {
      const env = containerEnv(service, exampleSettings);
      expect(forwarded.map((variable) => env[variable]), name).toEqual(forwarded.map(() => ''));
      expect(tracingRequested(env), name).toBe(false);
    }
  });

  it('passes a Langfuse-style traces endpoint and headers through as they are, and turns tracing on with it alone', () => {
    const endpoint = 'https://cloud.langfuse.com/api/public/otel/v1/traces';
    const headers = 'Authorization=Basic cGstbGYtMTpzay1sZi0x';
    const settings = withSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_HEADERS: headers, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' });
    for (const { name, service } of appServices) {
      const env = containerEnv(service, settings);
      expect(env, name).toMatchObject({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_HEADERS: headers, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_SAMPLER_ARG: '0.25' });
      expect(tracingRequested(env), name).toBe(true);
    }
  });

  it("the tracing profile's Jaeger publishes its UI and, on loopback, its OTLP/HTTP port (the guide's http://localhost:4318)", () => {
    const jaeger = compose.services.jaeger!;
    expect(jaeger.profiles).toEqual(['tracing']);
    expect(jaeger.ports).toEqual(['16686:16686', '127.0.0.1:4318:4318']);
  });
});

describe('.env.example', () => {
  const used = new Set([...composeText.matchAll(INTERPOLATION)].map((m) => m[1]!));

  it('documents exactly the settings docker-compose.yml reads', () => {
    expect([...exampleSettings.keys()].sort()).toEqual([...used].sort());
  });

  it('names only process variables, besides the compose-only AGENTPLANE_* ones', () => {
    const processVariables = new Set([...CONFIG_VARIABLES, ...WEBHOOK_CONFIG_VARIABLES, ...CHAT_CONFIG_VARIABLES, ...TRACING_VARIABLES]);
    const strays = [...exampleSettings.keys()].filter((k) => !k.startsWith('AGENTPLANE_') && !processVariables.has(k));
    expect(strays).toEqual([]);
    const shadowing = [...exampleSettings.keys()].filter((k) => k.startsWith('AGENTPLANE_') && processVariables.has(k));
    expect(shadowing).toEqual([]);
  });
});

describe('docker-compose.yml: Compose v2 and your agents', () => {
  const rootDir = fileURLToPath(ROOT);
  const composeV2 = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8', timeout: 20_000 }).status === 0;
  /** The Compose Specification schema, from the docker-compose npm package (a dependency of testcontainers). */
  const specSchema = (): Record<string, unknown> => {
    const dir = dirname(createRequire(import.meta.url).resolve('docker-compose/package.json'));
    return JSON.parse(readFileSync(join(dir, 'schema/compose-spec.json'), 'utf8')) as Record<string, unknown>;
  };

  it('follows the Compose Specification (the format of `docker compose`, v2)', () => {
    const validate = new Ajv({ allErrors: true, strict: false, validateSchema: false, validateFormats: false }).compile(specSchema());
    const errors = (document: unknown) => (validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
    expect(errors(compose)).toEqual([]);
    // The check can fail.
    expect(errors({ ...compose, services: { ...compose.services, worker: { ...compose.services.worker, comand: ['worker'] } } })).not.toEqual([]);
    // v1 (`docker-compose`, Debian 12's package) refuses `name:`: the file says v2 is needed.
    expect(compose).toHaveProperty('name');
    expect(composeText).toMatch(/Needs Docker Compose v2/);
  });

  it.runIf(composeV2)('passes `docker compose config` with the .env.example settings', () => {
    const run = spawnSync('docker', ['compose', '--env-file', '.env.example', '-f', 'docker-compose.yml', 'config', '--format', 'json'], {
      cwd: rootDir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const rendered = JSON.parse(run.stdout) as { services: Record<string, { volumes?: { type: string; source: string; target: string; read_only?: boolean }[] }> };
    for (const { name } of appServices) {
      expect(rendered.services[name]?.volumes, name).toContainEqual(
        expect.objectContaining({ type: 'bind', source: join(rootDir, 'examples/agents'), target: '/app/agents', read_only: true }),
      );
    }
  });

  it('mounts the agents folder read-only under /app in every agentplane container and passes AGENTS_MODULE', () => {
    const settings = withSettings({ AGENTS_MODULE: '/app/agents/index.js' });
    for (const { name, service } of appServices) {
      const mounts = (service.volumes ?? []).map((volume) => interpolate(volume, settings).split(':'));
      const agents = mounts.find(([, target]) => target === '/app/agents');
      expect(agents, `${name} mounts no agents folder at /app/agents`).toBeDefined();
      const [source, , mode] = agents!;
      expect(mode, name).toBe('ro');
      // The module AGENTS_MODULE names in the container is a file of the mounted host folder.
      const module = loadConfig(containerEnv(service, settings)).AGENTS_MODULE!;
      expect(module.startsWith('/app/agents/'), name).toBe(true);
      expect(existsSync(join(rootDir, source!, module.slice('/app/agents/'.length))), `${name}: ${source}${module}`).toBe(true);
      // Unset, the built-in agents stay.
      expect(loadConfig(containerEnv(service, exampleSettings)).AGENTS_MODULE, name).toBeUndefined();
    }
  });
});
