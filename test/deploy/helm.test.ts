import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.js';
import { WEBHOOK_CONFIG_VARIABLES, loadWebhooksConfig } from '../../src/integrations/webhook/config.js';
import { CHAT_CONFIG_VARIABLES } from '../../src/integrations/gateway/config.js';
import { TRACING_VARIABLES } from '../../src/observability/tracing.js';

/*
 * Static checks of helm/agentplane: the values files are validated against values.schema.json
 * with ajv, and the templates are read as text for the env names and mechanisms in them.
 * helm-render.test.ts renders the chart with Helm itself (lint, template, the objects' schemas).
 */

const CHART = new URL('../../helm/agentplane/', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, CHART), 'utf8');

type Values = Record<string, unknown>;
type Json = Record<string, any>;

const schema = JSON.parse(read('values.schema.json')) as Json;
const defaults = parse(read('values.yaml')) as Values;
const exampleFiles = readdirSync(CHART).filter((f) => /^values-.+\.ya?ml$/.test(f));
const templateFiles = readdirSync(new URL('templates/', CHART)).filter((f) => /\.(ya?ml|tpl|txt)$/.test(f));
const template = (file: string): string => read(`templates/${file}`);

/** Helm's merge of a values file over the defaults: maps merge, anything else replaces, null deletes. */
function mergeValues(base: Values, override: Values): Values {
  const merged: Values = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete merged[key];
    else if (isMap(value) && isMap(merged[key])) merged[key] = mergeValues(merged[key] as Values, value);
    else merged[key] = value;
  }
  return merged;
}

function isMap(value: unknown): value is Values {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** values.yaml alone, and each example merged over it, as Helm sees them. */
const valueSets: [string, Values][] = [
  ['values.yaml', defaults],
  ...exampleFiles.map((f): [string, Values] => [f, mergeValues(defaults, parse(read(f)) as Values)]),
];

const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile(schema);

function schemaErrors(values: Values): string[] {
  return validate(values) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

/** Uppercase names in `- name: X` entries (env lists) of a template. */
function envNames(text: string): string[] {
  return [...text.matchAll(/-\s+name:\s+([A-Z][A-Z0-9_]*)\s*$/gm)].map((m) => m[1]!);
}

/** Literal uppercase keys written by a ConfigMap or Secret template (`  NAME: {{ … }}`). */
function literalKeys(text: string): string[] {
  return [...text.matchAll(/^\s+([A-Z][A-Z0-9_]*):\s/gm)].map((m) => m[1]!);
}

const propertyNames = (node: Json | undefined): string[] => Object.keys(node?.properties ?? {});
const configKeys = propertyNames(schema.properties.config);
const secretKeys = propertyNames(schema.properties.secrets);
const webhookConfigKeys = propertyNames(schema.properties.webhooks.properties.config);
const webhookSecretKeys = propertyNames(schema.properties.webhooks.properties.secrets);

/** Variables the chart sets itself: explicit env entries and literal ConfigMap/Secret keys. */
const chartManaged = new Set([
  ...['api-deployment.yaml', 'worker-deployment.yaml'].flatMap((f) => envNames(template(f))),
  ...['configmap.yaml', 'secret.yaml'].flatMap((f) => literalKeys(template(f))),
]);
const webhookManaged = new Set(envNames(template('webhooks-deployment.yaml')));

const text = (value: unknown): string => String(value);
const nonEmpty = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

/**
 * The environment of an api pod for `values`, as the templates build it: the ConfigMap
 * (`config`, SERVICE_SHUTDOWN_TIMEOUT_MS, REDIS_URL of the bundled Redis), the Secret
 * (non-empty `secrets`, REDIS_URL from redis.url) and the explicit env entries. An
 * existingSecret is assumed to hold what values.yaml documents for it.
 */
function apiPodEnv(values: Json): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(values.config as Values)) env[name] = text(value);
  env.SERVICE_SHUTDOWN_TIMEOUT_MS = text(values.shutdown.drainTimeoutMs);
  const redis = values.redis as Json;
  const external = [redis.url, redis.clusterNodes, redis.sentinels].some(nonEmpty);
  if (redis.bundled.enabled && !external) env.REDIS_URL = 'redis://release-agentplane-redis:6379';
  if (nonEmpty(redis.clusterNodes)) env.REDIS_CLUSTER_NODES = text(redis.clusterNodes);
  if (nonEmpty(redis.sentinels)) Object.assign(env, { REDIS_SENTINELS: text(redis.sentinels), REDIS_SENTINEL_NAME: text(redis.sentinelMasterName) });
  if (nonEmpty(redis.username)) env.REDIS_USERNAME = text(redis.username);
  if (redis.tls?.enabled) env.REDIS_TLS = 'true';
  if (redis.tls?.sentinels) env.REDIS_SENTINEL_TLS = 'true';
  if (values.existingSecret) {
    if (!redis.bundled.enabled && !external) env.REDIS_URL = 'rediss://from-existing-secret:6379';
    if (env.SERVICE_AUTH === 'jwt' && !env.SERVICE_JWT_JWKS_URL && !env.SERVICE_JWT_PUBLIC_KEY) {
      env.SERVICE_JWT_SECRET = 'from-existing-secret';
    }
    if (env.SERVICE_AUTH === 'apikey') env.SERVICE_API_KEYS = 'from-existing-secret:viewer';
  } else {
    if (nonEmpty(redis.url)) env.REDIS_URL = text(redis.url);
    if (nonEmpty(redis.password)) env.REDIS_PASSWORD = text(redis.password);
    if (nonEmpty(redis.sentinelPassword)) env.REDIS_SENTINEL_PASSWORD = text(redis.sentinelPassword);
    for (const [name, value] of Object.entries(values.secrets as Values)) if (nonEmpty(value)) env[name] = text(value);
  }
  env.SERVICE_PORT = text(values.api.port);
  env.SERVICE_REPLICA_ID = 'release-agentplane-api-5d9c7-abcde';
  return env;
}

function webhooksPodEnv(values: Json): Record<string, string> {
  const env: Record<string, string> = { ...apiPodEnv(values) };
  delete env.SERVICE_PORT;
  for (const [name, value] of Object.entries(values.webhooks.config as Values)) env[name] = text(value);
  if (values.webhooks.existingSecret) {
    if (env.WEBHOOK_SIGNATURE && env.WEBHOOK_SIGNATURE !== 'none') env.WEBHOOK_SIGNING_SECRET = 'from-existing-secret';
  } else {
    for (const [name, value] of Object.entries(values.webhooks.secrets as Values)) if (nonEmpty(value)) env[name] = text(value);
  }
  env.WEBHOOK_PORT = text(values.webhooks.port);
  return env;
}

describe('helm/agentplane: files', () => {
  it('Chart.yaml is a v2 chart whose appVersion is the package version', () => {
    const chart = parse(read('Chart.yaml')) as Json;
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Json;
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe('agentplane');
    expect(chart.appVersion).toBe(pkg.version);
  });

  it('has the templates the deployment needs', () => {
    expect(templateFiles).toEqual(
      expect.arrayContaining([
        '_helpers.tpl', 'NOTES.txt', 'configmap.yaml', 'secret.yaml', 'api-deployment.yaml', 'api-service.yaml',
        'api-hpa.yaml', 'pdb.yaml', 'ingress.yaml', 'httproute.yaml', 'worker-deployment.yaml',
        'servicemonitor.yaml', 'redis.yaml',
      ]),
    );
  });

  it('every values file parses as YAML, and there is a production example', () => {
    expect(exampleFiles).toContain('values-production.example.yaml');
    for (const [name, values] of valueSets) expect(isMap(values), name).toBe(true);
  });

  it('every template has balanced actions and blocks', () => {
    for (const file of templateFiles) expect(templateProblems(template(file)), file).toEqual([]);
  });
});

describe('helm/agentplane: values.schema.json', () => {
  it('is a draft-07 schema', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
  });

  it.each(valueSets)('accepts %s', (_name, values) => {
    expect(schemaErrors(values)).toEqual([]);
  });

  it.each([
    ['a variable config.ts does not read', { config: { SERVICE_PROT: '8080' } }],
    ['a variable the chart sets itself', { config: { REDIS_URL: 'redis://r:6379' } }],
    ['a secret in the ConfigMap', { config: { SERVICE_JWT_SECRET: 'x' } }],
    ['a malformed rate', { config: { SERVICE_RATE_LIMIT: '600 per minute' } }],
    ['an unknown top-level key', { replicaCount: 3 }],
  ])('refuses %s', (_name, override) => {
    expect(schemaErrors(mergeValues(defaults, override as Values))).not.toEqual([]);
  });

  it("accepts the OpenTelemetry settings of the guide's recipes: endpoints, protocols, resource, sampler, and the headers as secrets", () => {
    const cases: Values[] = [
      { config: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } },
      {
        config: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://cloud.langfuse.com/api/public/otel/v1/traces', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' },
        secrets: { OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'Authorization=Basic cGstbGYtMTpzay1sZi0x' },
      },
      {
        config: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://api.smith.langchain.com/otel/v1/traces', OTEL_SERVICE_NAME: 'agents', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod' },
        secrets: { OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=lsv2-key,Langsmith-Project=agents' },
      },
      { config: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 0.25 } },
      { config: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
      // In any case, as the processes read it (and as OpenTelemetry's environment specification says).
      { config: { OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio', OTEL_TRACES_SAMPLER_ARG: '0.5' } },
      { config: { OTEL_TRACES_SAMPLER: 'ALWAYS_OFF' } },
      // Empty is unset, as the processes read it.
      { config: { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '', OTEL_TRACES_SAMPLER: '', OTEL_TRACES_SAMPLER_ARG: '' } },
    ];
    for (const override of cases) expect(schemaErrors(mergeValues(defaults, override)), JSON.stringify(override)).toEqual([]);
  });

  it.each([
    ['a protocol agentplane does not export with', { config: { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' } }],
    ['a traces endpoint that is not a URL', { config: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'cloud.langfuse.com' } }],
    ['a sampler the SDK does not have', { config: { OTEL_TRACES_SAMPLER: 'ratio' } }],
    ['a sampler name with more after it', { config: { OTEL_TRACES_SAMPLER: 'always_onward' } }],
    ['a sampler ratio above 1', { config: { OTEL_TRACES_SAMPLER_ARG: 2 } }],
    ['headers with an API key in the ConfigMap', { config: { OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=k' } }],
  ])('refuses %s', (_name, override) => {
    expect(schemaErrors(mergeValues(defaults, override as Values))).not.toEqual([]);
  });

  it('accepts each auth mode with its credentials', () => {
    const cases: Values[] = [
      { config: { SERVICE_AUTH: 'jwt' }, secrets: { SERVICE_JWT_SECRET: 'shared' } },
      { config: { SERVICE_AUTH: 'jwt', SERVICE_JWT_JWKS_URL: 'https://idp.example/jwks.json' } },
      { config: { SERVICE_AUTH: 'jwt' }, existingSecret: 'agentplane-auth' },
      { config: { SERVICE_AUTH: 'apikey' }, secrets: { SERVICE_API_KEYS: 'k:admin:acme' } },
      { redis: { url: 'rediss://r.example:6380', bundled: { enabled: false } } },
      // redis.url alone: the bundled Redis is then not deployed (helm-render.test.ts renders it).
      { redis: { url: 'redis://redis.example:6379' } },
    ];
    for (const override of cases) expect(schemaErrors(mergeValues(defaults, override)), JSON.stringify(override)).toEqual([]);
  });

  it('accepts an enabled receiver with a secret, an existing secret, a signature scheme, or WEBHOOK_INSECURE', () => {
    const cases: Values[] = [
      { webhooks: { enabled: true, secrets: { WEBHOOK_SECRET: 'hook-secret' } } },
      { webhooks: { enabled: true, existingSecret: 'hooks' } },
      { webhooks: { enabled: true, config: { WEBHOOK_SIGNATURE: 'github' }, secrets: { WEBHOOK_SIGNING_SECRET: 'gh' } } },
      { webhooks: { enabled: true, config: { WEBHOOK_INSECURE: 'true' } } },
    ];
    for (const override of cases) expect(schemaErrors(mergeValues(defaults, override)), JSON.stringify(override)).toEqual([]);
  });
});

describe('helm/agentplane: environment variables', () => {
  it('sets, and lets operators set, only variables src/config.ts reads (and tracing, in every process)', () => {
    const known = new Set([...CONFIG_VARIABLES, ...TRACING_VARIABLES]);
    const unknown = [...configKeys, ...secretKeys, ...chartManaged].filter((name) => !known.has(name));
    expect(unknown).toEqual([]);
  });

  it('gives the webhook receiver only variables its process reads', () => {
    const known = new Set([...CONFIG_VARIABLES, ...WEBHOOK_CONFIG_VARIABLES]);
    const names = [...webhookConfigKeys, ...webhookSecretKeys, ...webhookManaged];
    expect(names.filter((name) => !known.has(name))).toEqual([]);
    const webhookOnly = new Set(WEBHOOK_CONFIG_VARIABLES.filter((name) => !CONFIG_VARIABLES.includes(name)));
    expect([...webhookConfigKeys, ...webhookSecretKeys].filter((name) => !webhookOnly.has(name))).toEqual([]);
  });

  it('lets every variable of src/config.ts be set, each from exactly one place', () => {
    const settable = [...configKeys, ...secretKeys, ...chartManaged];
    const missing = CONFIG_VARIABLES.filter((name) => !settable.includes(name));
    expect(missing, 'add them to config (or secrets) in values.schema.json so operators can set them').toEqual([]);
    expect([...configKeys, ...secretKeys].filter((name) => chartManaged.has(name))).toEqual([]);
    expect(configKeys.filter((name) => secretKeys.includes(name))).toEqual([]);
  });

  it('lets every chat gateway variable be set, only on the API pods', () => {
    const chat = [...propertyNames(schema.properties.chat.properties.config), ...propertyNames(schema.properties.chat.properties.secrets)];
    expect([...chat].sort()).toEqual([...CHAT_CONFIG_VARIABLES].sort());
    expect(template('api-deployment.yaml')).toMatch(/-chat\n/);
    for (const other of ['worker-deployment.yaml', 'webhooks-deployment.yaml']) expect(template(other)).not.toMatch(/-chat\b/);
  });

  it('lets every webhook variable be set', () => {
    const settable = new Set([...webhookConfigKeys, ...webhookSecretKeys, ...webhookManaged, ...configKeys]);
    expect(WEBHOOK_CONFIG_VARIABLES.filter((name) => !settable.has(name))).toEqual([]);
  });

  it('builds the pod environment from the ConfigMap, the Secret and explicit entries', () => {
    const configmap = template('configmap.yaml');
    expect(configmap).toMatch(/range \$name, \$value := \.Values\.config\b/);
    expect(configmap).toMatch(/SERVICE_SHUTDOWN_TIMEOUT_MS: \{\{ \.Values\.shutdown\.drainTimeoutMs\b/);
    expect(configmap).toMatch(/if include "agentplane\.bundledRedis" \. \}\}\s+REDIS_URL:/);
    const secret = template('secret.yaml');
    expect(secret).toMatch(/with \.Values\.redis\.url \}\}\s+REDIS_URL:/);
    expect(secret).toMatch(/range \$name, \$value := \.Values\.secrets\b/);
    const helpers = template('_helpers.tpl');
    expect(helpers).toMatch(/configMapRef:\s+name: \{\{ include "agentplane\.fullname" \. \}\}-config/);
    expect(helpers).toMatch(/secretRef:\s+name: \{\{ include "agentplane\.secretName" \. \}\}/);
    for (const [file, portVariable, component] of [
      ['api-deployment.yaml', 'SERVICE_PORT', 'api'],
      ['worker-deployment.yaml', 'WORKER_PORT', 'worker'],
      ['webhooks-deployment.yaml', 'WEBHOOK_PORT', 'webhooks'],
    ] as const) {
      const deployment = template(file);
      expect(deployment, file).toContain('include "agentplane.envFrom" .');
      expect(deployment, file).toMatch(new RegExp(`name: ${portVariable}\\s+value: \\{\\{ \\.Values\\.${component}\\.port \\| quote \\}\\}`));
      expect(deployment, file).toMatch(/name: SERVICE_REPLICA_ID\s+valueFrom:\s+fieldRef:\s+fieldPath: metadata\.name/);
    }
    const webhooks = template('webhooks-deployment.yaml');
    expect(webhooks).toMatch(/configMapRef:\s+name: \{\{ include "agentplane\.fullname" \. \}\}-webhooks/);
    expect(webhooks).toContain('include "agentplane.webhooksSecretName" .');
  });

  it.each(valueSets)('%s: the api and worker get Redis and the credentials their auth mode needs', (_name, values) => {
    const env = apiPodEnv(values);
    const config = loadConfig(env);
    expect(config.redis).toBeDefined();
    expect(config.SERVICE_TRUST_PROXY).toBe(true);
    expect(config.SERVICE_REPLICA_ID).toBe(env.SERVICE_REPLICA_ID);
  });

  it.each(valueSets)('%s: the webhook receiver starts when enabled with its secret', (_name, values) => {
    const enabled = mergeValues(values, { webhooks: { enabled: true, secrets: { WEBHOOK_SECRET: 'hook-secret' } } }) as Json;
    expect(schemaErrors(enabled)).toEqual([]);
    const env = webhooksPodEnv(enabled);
    expect(loadConfig(env).redis).toBeDefined();
    expect(loadWebhooksConfig(env).port).toBe(enabled.webhooks.port);
  });

  it('gives a Redis Cluster or a Sentinel set, with passwords and TLS, to the processes as their config reads them', () => {
    const cluster = mergeValues(defaults, { redis: { clusterNodes: 'redis-0:6379,redis-1:6379', password: 'p', tls: { enabled: true, caFile: '/etc/ca.pem' } } });
    expect(schemaErrors(cluster)).toEqual([]);
    expect(loadConfig(apiPodEnv(cluster)).redis).toMatchObject({ mode: 'cluster', auth: { password: 'p' }, tls: {} });
    const sentinel = mergeValues(defaults, { redis: { sentinels: 's-0:26379,s-1:26379', sentinelMasterName: 'main', sentinelPassword: 'sp' } });
    expect(loadConfig(apiPodEnv(sentinel)).redis).toMatchObject({ mode: 'sentinel', name: 'main', sentinelPassword: 'sp' });
    expect(schemaErrors(mergeValues(defaults, { redis: { clusterNodes: 'redis-0' } }))).not.toEqual([]);
    const helpers = template('_helpers.tpl');
    expect(helpers).toMatch(/set only one of redis\.url, redis\.clusterNodes and redis\.sentinels/);
    expect(helpers).toMatch(/define "agentplane\.bundledRedis"[\s\S]*\.Values\.redis\.clusterNodes[\s\S]*\.Values\.redis\.sentinels/);
  });

  it('fails the pod environment of each auth mode without its credentials (the checks above can fail)', () => {
    const jwt = mergeValues(defaults, { config: { SERVICE_AUTH: 'jwt' } });
    expect(() => loadConfig(apiPodEnv(jwt))).toThrow(/SERVICE_JWT_SECRET/);
    const apikey = mergeValues(defaults, { config: { SERVICE_AUTH: 'apikey' } });
    expect(() => loadConfig(apiPodEnv(apikey))).toThrow(/SERVICE_API_KEYS/);
  });
});

describe('helm/agentplane: pods', () => {
  it.each(valueSets)('%s: the grace period outlasts the preStop sleep plus the drain', (_name, values) => {
    const { drainTimeoutMs, preStopSleepSeconds, terminationGracePeriodSeconds } = (values as Json).shutdown;
    expect(terminationGracePeriodSeconds).toBeGreaterThan(preStopSleepSeconds + Math.ceil(drainTimeoutMs / 1000));
  });

  it('sleeps before SIGTERM where a Service routes traffic, and applies the grace period to every pod', () => {
    for (const file of ['api-deployment.yaml', 'webhooks-deployment.yaml']) {
      expect(template(file), file).toMatch(/preStop:[\s\S]*command: \["sleep", "\{\{ \.Values\.shutdown\.preStopSleepSeconds \}\}"\]/);
    }
    expect(template('_helpers.tpl')).toMatch(/terminationGracePeriodSeconds: \{\{ \.Values\.shutdown\.terminationGracePeriodSeconds \}\}/);
    expect(template('_helpers.tpl')).toMatch(/define "agentplane\.validate"[\s\S]*fail/);
    expect(template('configmap.yaml')).toMatch(/^\{\{- include "agentplane\.validate" \. \}\}/);
  });

  it('probes /health/live for liveness and /health/ready for readiness', () => {
    for (const file of ['api-deployment.yaml', 'worker-deployment.yaml', 'webhooks-deployment.yaml']) {
      const deployment = template(file);
      expect(deployment, file).toMatch(/livenessProbe:\s+httpGet:\s+path: \/health\/live/);
      expect(deployment, file).toMatch(/readinessProbe:\s+httpGet:\s+path: \/health\/ready/);
    }
  });

  it.each(valueSets)('%s: pods run as non-root with a read-only root filesystem', (_name, values) => {
    const { podSecurityContext, securityContext } = values as Json;
    expect(podSecurityContext.runAsNonRoot).toBe(true);
    expect(podSecurityContext.runAsUser).toBeGreaterThan(0);
    expect(securityContext.readOnlyRootFilesystem).toBe(true);
    expect(securityContext.allowPrivilegeEscalation).toBe(false);
    expect(securityContext.capabilities.drop).toContain('ALL');
  });

  it('every agentplane container uses the pod and container security settings and a writable /tmp', () => {
    expect(template('_helpers.tpl')).toMatch(/securityContext:\s+\{\{- toYaml \.Values\.podSecurityContext/);
    for (const file of ['api-deployment.yaml', 'worker-deployment.yaml', 'webhooks-deployment.yaml']) {
      const deployment = template(file);
      expect(deployment, file).toContain('include "agentplane.podCommon" .');
      expect(deployment, file).toContain('toYaml .Values.securityContext');
      expect(deployment, file).toMatch(/mountPath: \/tmp/);
    }
  });
});

describe('helm/agentplane: routing', () => {
  it('defaults the Ingress to SSE-safe settings for nginx-style controllers', () => {
    const annotations = (defaults as Json).ingress.annotations as Record<string, string>;
    expect(annotations['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
    expect(template('ingress.yaml')).toMatch(/ingressClassName: \{\{ \. \}\}/);
  });

  it('gives the event stream its own HTTPRoute rule without a request timeout', () => {
    expect((defaults as Json).httpRoute.eventStreamTimeouts).toEqual({ request: '0s' });
    expect(template('httproute.yaml')).toMatch(
      /type: Exact\s+value: \/api\/events\/stream\s+\{\{- with \.Values\.httpRoute\.eventStreamTimeouts \}\}\s+timeouts:/,
    );
  });
});

/**
 * Problems in the Go-template actions of `source`: unclosed `{{`, and `if`/`range`/`with`/
 * `define`/`block` not matched by `end` (or an `else` outside them).
 */
function templateProblems(source: string): string[] {
  const problems: string[] = [];
  const open: string[] = [];
  let index = 0;
  for (;;) {
    const start = source.indexOf('{{', index);
    if (start === -1) break;
    const end = source.indexOf('}}', start + 2);
    if (end === -1) {
      problems.push(`unclosed action at offset ${start}`);
      break;
    }
    const action = source.slice(start + 2, end).replace(/^-?\s*/, '').replace(/\s*-?$/, '');
    index = end + 2;
    if (action.startsWith('/*')) continue;
    const keyword = /^(\w+)/.exec(action)?.[1];
    if (keyword === 'if' || keyword === 'range' || keyword === 'with' || keyword === 'define' || keyword === 'block') {
      open.push(keyword);
    } else if (keyword === 'else') {
      if (open.length === 0) problems.push(`else outside a block at offset ${start}`);
    } else if (keyword === 'end') {
      if (open.pop() === undefined) problems.push(`end without a block at offset ${start}`);
    }
  }
  if (open.length > 0) problems.push(`unclosed ${open.join(', ')}`);
  return problems;
}
