import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { tracingRequested } from '../../src/observability/tracing.js';
import { helm, helmBinary } from '../support/helm.js';

/*
 * helm/agentplane rendered by Helm itself (v4, unzipped from an npm package, see
 * test/support/helm.ts): `helm lint`, and `helm template` with the values operators start
 * from, every rendered object validated against the Kubernetes schema of its kind
 * (kubernetes-models), the extra env, volumes and mounts where they belong, and the
 * messages of the settings operators get wrong first.
 */

const CHART = fileURLToPath(new URL('../../helm/agentplane/', import.meta.url));

type Json = Record<string, any>;
type Values = Record<string, unknown>;

// Values files are written while the tests are collected (it.each arguments), hence here.
const scratch = mkdtempSync(join(tmpdir(), 'agentplane-helm-values-'));
let files = 0;

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `-f` arguments for each set of values, written as files (as operators pass them). */
function valueArgs(...sets: Values[]): string[] {
  return sets.flatMap((values) => {
    const file = join(scratch, `values-${++files}.yaml`);
    writeFileSync(file, stringify(values));
    return ['-f', file];
  });
}

/** `helm template` of the chart; throws with Helm's message when it refuses. */
function render(...args: string[]): Json[] {
  const run = helm(['template', 'rel', CHART, '--namespace', 'agents', ...args]);
  if (run.status !== 0) throw new Error(run.stderr.trim());
  return parseAllDocuments(run.stdout)
    .map((doc) => doc.toJS() as Json | null)
    .filter((object): object is Json => object !== null);
}

/** The message Helm refuses `args` with; fails when it renders. */
function refusal(...args: string[]): string {
  const run = helm(['template', 'rel', CHART, ...args]);
  expect(run.status, `rendered although it should not:\n${run.stdout.slice(0, 500)}`).not.toBe(0);
  return run.stderr;
}

const byKind = (objects: Json[], kind: string): Json[] => objects.filter((o) => o.kind === kind);
const deployment = (objects: Json[], component: string): Json =>
  byKind(objects, 'Deployment').find((d) => d.metadata.labels['app.kubernetes.io/component'] === component)!;
const container = (d: Json): Json => d.spec.template.spec.containers[0];
const envNames = (d: Json): string[] => (container(d).env as Json[]).map((e) => e.name as string);

/** Kinds of CRDs whose schemas kubernetes-models does not ship: checked for their shape only. */
const CUSTOM_KINDS = new Set(['gateway.networking.k8s.io/v1 HTTPRoute', 'monitoring.coreos.com/v1 ServiceMonitor']);

/** Validates an object with the kubernetes-models class of its apiVersion and kind; the error names the field. */
async function validateObject(object: Json): Promise<void> {
  const id = `${object.apiVersion} ${object.kind}`;
  if (CUSTOM_KINDS.has(id)) {
    expect(object.metadata?.name, id).toMatch(/^[a-z0-9-]{1,63}$/);
    expect(object.spec, id).toBeTypeOf('object');
    return;
  }
  const module = (await import(`kubernetes-models/${object.apiVersion}/${object.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = module[object.kind];
  if (!Model) throw new Error(`kubernetes-models has no ${id}`);
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${id} ${object.metadata?.name}: ${(error as Error).message}`, { cause: error });
  }
}

/** What the schemas cannot see: every mount names a volume of its pod (or claim template), env names are unique. */
function podProblems(object: Json): string[] {
  const pod = object.spec?.template?.spec as Json | undefined;
  if (!pod) return [];
  const claims = ((object.spec.volumeClaimTemplates ?? []) as Json[]).map((c) => c.metadata.name);
  const volumes = new Set([...((pod.volumes ?? []) as Json[]).map((v) => v.name), ...claims]);
  const problems: string[] = [];
  for (const c of pod.containers as Json[]) {
    for (const mount of (c.volumeMounts ?? []) as Json[]) {
      if (!volumes.has(mount.name)) problems.push(`${object.metadata.name}/${c.name}: mount of unknown volume ${mount.name}`);
    }
    const names = ((c.env ?? []) as Json[]).map((e) => e.name);
    const twice = names.filter((name, i) => names.indexOf(name) !== i);
    if (twice.length > 0) problems.push(`${object.metadata.name}/${c.name}: env set twice: ${twice.join(', ')}`);
  }
  return problems;
}

/** Every optional part of the chart on at once. */
const EVERYTHING: Values = {
  redis: { url: 'rediss://redis.example:6380' },
  config: { SERVICE_AUTH: 'jwt', SERVICE_RBAC: 'true', AGENTS_MODULE: '/app/agents/index.js' },
  secrets: { SERVICE_JWT_SECRET: 'a-shared-secret-of-at-least-32-bytes!' },
  api: { autoscaling: { enabled: true, targetMemoryUtilizationPercentage: 80 } },
  webhooks: { enabled: true, secrets: { WEBHOOK_SECRET: 'hook-secret' } },
  ingress: { enabled: true, tls: [{ secretName: 'agentplane-tls', hosts: ['agentplane.example.com'] }] },
  httpRoute: { enabled: true },
  serviceMonitor: { enabled: true },
  imagePullSecrets: [{ name: 'registry' }],
  extraEnv: [{ name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'llm', key: 'api-key' } } }],
  extraVolumes: [{ name: 'agents', configMap: { name: 'my-agents' } }],
  extraVolumeMounts: [{ name: 'agents', mountPath: '/app/agents', readOnly: true }],
};

describe('helm/agentplane rendered by helm', () => {
  it('passes helm lint with the defaults, the production example and every part on', () => {
    for (const args of [[], ['-f', join(CHART, 'values-production.example.yaml')], valueArgs(EVERYTHING)]) {
      const run = helm(['lint', CHART, ...args]);
      expect(run.status, `${args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toContain('0 chart(s) failed');
    }
  });

  it.each([
    ['the defaults', [] as string[]],
    ['values-production.example.yaml', ['-f', join(CHART, 'values-production.example.yaml')]],
    ['every part on', valueArgs(EVERYTHING)],
    ['the bundled Redis without persistence', valueArgs({ redis: { bundled: { persistence: { enabled: false } } } })],
  ])('renders %s into objects that each validate against their Kubernetes schema', async (_name, args) => {
    const objects = render(...args);
    expect(byKind(objects, 'Deployment').length).toBeGreaterThanOrEqual(2);
    for (const object of objects) await validateObject(object);
    expect(objects.flatMap(podProblems)).toEqual([]);
  });

  it('the object checks can fail: a bad field and a mount without its volume are caught', async () => {
    const objects = render();
    const api = structuredClone(deployment(objects, 'api'));
    container(api).ports[0].containerPort = 'http';
    await expect(validateObject(api)).rejects.toThrow(/containerPort/);
    container(api).volumeMounts.push({ name: 'nowhere', mountPath: '/x' });
    expect(podProblems(api)).toEqual([expect.stringContaining('unknown volume nowhere')]);
  });
});

describe('helm/agentplane: extraEnv, extraVolumes, extraVolumeMounts', () => {
  const agents: Values = {
    config: { AGENTS_MODULE: '/app/agents/index.js' },
    extraEnv: [{ name: 'AGENTS_TOKEN', valueFrom: { secretKeyRef: { name: 'agents', key: 'token' } } }],
    extraVolumes: [{ name: 'agents', configMap: { name: 'my-agents' } }],
    extraVolumeMounts: [{ name: 'agents', mountPath: '/app/agents', readOnly: true }],
    api: { extraVolumes: [{ name: 'cache', emptyDir: {} }], extraVolumeMounts: [{ name: 'cache', mountPath: '/app/cache' }] },
    worker: { extraEnv: [{ name: 'WORKER_ONLY', value: '1' }] },
    webhooks: { enabled: true, secrets: { WEBHOOK_SECRET: 'hook-secret' } },
  };

  it('mount the agents folder and pass the shared settings to the api, worker and webhooks pods', async () => {
    const objects = render(...valueArgs(agents));
    for (const component of ['api', 'worker', 'webhooks']) {
      const d = deployment(objects, component);
      await validateObject(d);
      expect(envNames(d), component).toContain('AGENTS_TOKEN');
      expect(container(d).volumeMounts, component).toContainEqual({ name: 'agents', mountPath: '/app/agents', readOnly: true });
      expect(d.spec.template.spec.volumes, component).toContainEqual({ name: 'agents', configMap: { name: 'my-agents' } });
      // The chart's own /tmp stays.
      expect(container(d).volumeMounts, component).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    }
    const config = byKind(objects, 'ConfigMap').find((c) => c.metadata.name === 'rel-agentplane-config')!;
    expect(config.data.AGENTS_MODULE).toBe('/app/agents/index.js');
  });

  it("add a component's own entries to that component only, after the shared ones", () => {
    const objects = render(...valueArgs(agents));
    expect(envNames(deployment(objects, 'worker')).slice(-2)).toEqual(['AGENTS_TOKEN', 'WORKER_ONLY']);
    expect(envNames(deployment(objects, 'api'))).not.toContain('WORKER_ONLY');
    expect(envNames(deployment(objects, 'webhooks'))).not.toContain('WORKER_ONLY');
    const mounts = (component: string) => (container(deployment(objects, component)).volumeMounts as Json[]).map((m) => m.mountPath);
    expect(mounts('api')).toEqual(['/tmp', '/app/agents', '/app/cache']);
    expect(mounts('worker')).toEqual(['/tmp', '/app/agents']);
  });

  it('render nothing extra by default', () => {
    const objects = render();
    for (const component of ['api', 'worker']) {
      const d = deployment(objects, component);
      expect(d.spec.template.spec.volumes.map((v: Json) => v.name)).toEqual(['tmp']);
      expect(envNames(d)).toEqual([component === 'api' ? 'SERVICE_PORT' : 'WORKER_PORT', 'SERVICE_REPLICA_ID']);
    }
  });

  it.each([
    ['a variable the chart sets', { extraEnv: [{ name: 'SERVICE_PORT', value: '1' }] }, /extraEnv\/0\/name/],
    ['an env entry without a name', { worker: { extraEnv: [{ value: '1' }] } }, /worker\/extraEnv\/0.*name/],
    ['a volume named like the chart\'s own', { extraVolumes: [{ name: 'tmp', emptyDir: {} }] }, /extraVolumes\/0\/name/],
    ['a mount over /tmp', { api: { extraVolumeMounts: [{ name: 'x', mountPath: '/tmp' }] } }, /api\/extraVolumeMounts\/0\/mountPath/],
    ['a mount without a path', { extraVolumeMounts: [{ name: 'x' }] }, /extraVolumeMounts\/0.*mountPath/],
  ])('refuse %s', (_name, values, where) => {
    expect(refusal(...valueArgs(values))).toMatch(where);
  });
});

describe('helm/agentplane: OpenTelemetry', () => {
  const configMap = (objects: Json[]): Record<string, string> => byKind(objects, 'ConfigMap').find((c) => c.metadata.name === 'rel-agentplane-config')!.data;
  const secretData = (objects: Json[]): Record<string, string> =>
    Object.fromEntries(Object.entries((byKind(objects, 'Secret').find((s) => s.metadata.name === 'rel-agentplane')?.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));

  it("renders the guide's Langfuse recipe for every process: the traces endpoint and sampler in the ConfigMap, the headers in the Secret", () => {
    const objects = render(
      ...valueArgs({
        config: {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://cloud.langfuse.com/api/public/otel/v1/traces',
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: 'agents',
          OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod',
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          // A YAML number: rendered as written, not cut to "0".
          OTEL_TRACES_SAMPLER_ARG: 0.25,
        },
        secrets: { OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'Authorization=Basic cGstbGYtMTpzay1sZi0x' },
        webhooks: { enabled: true, secrets: { WEBHOOK_SECRET: 'hook-secret' } },
      }),
    );
    const env = { ...configMap(objects), ...secretData(objects) };
    expect(env).toMatchObject({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://cloud.langfuse.com/api/public/otel/v1/traces',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'agents',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'Authorization=Basic cGstbGYtMTpzay1sZi0x',
    });
    expect(configMap(objects)).not.toHaveProperty('OTEL_EXPORTER_OTLP_TRACES_HEADERS');
    expect(tracingRequested(env)).toBe(true);
    for (const component of ['api', 'worker', 'webhooks']) {
      const from = container(deployment(objects, component)).envFrom as Json[];
      expect(from, component).toEqual(expect.arrayContaining([{ configMapRef: { name: 'rel-agentplane-config' } }, { secretRef: { name: 'rel-agentplane' } }]));
    }
  });

  it('whole numbers still render as digits; the defaults and empty values leave tracing off', () => {
    const objects = render(...valueArgs({ config: { SERVICE_MAX_BODY_BYTES: 1048576, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_SAMPLER_ARG: 1 } }));
    expect(configMap(objects)).toMatchObject({ SERVICE_MAX_BODY_BYTES: '1048576', OTEL_TRACES_SAMPLER_ARG: '1', OTEL_EXPORTER_OTLP_ENDPOINT: '' });
    expect(tracingRequested({ ...configMap(objects), ...secretData(objects) })).toBe(false);
    const defaults = render();
    const env = { ...configMap(defaults), ...secretData(defaults) };
    expect(Object.keys(env).filter((name) => name.startsWith('OTEL_'))).toEqual([]);
    expect(tracingRequested(env)).toBe(false);
  });

  it.each([
    ['a gRPC protocol', ['--set', 'config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc'], 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'],
    ['the headers in the ConfigMap', ['--set', 'config.OTEL_EXPORTER_OTLP_HEADERS=x-api-key=k'], "additional properties 'OTEL_EXPORTER_OTLP_HEADERS' not allowed"],
  ])('refuses %s', (_name, args, message) => {
    expect(refusal(...args)).toContain(message);
  });
});

describe('helm/agentplane: the first settings', () => {
  it('--set redis.url alone uses that Redis and leaves the bundled one out', () => {
    const objects = render('--set', 'redis.url=redis://redis.example:6379');
    expect(byKind(objects, 'StatefulSet')).toEqual([]);
    const secret = byKind(objects, 'Secret').find((s) => s.metadata.name === 'rel-agentplane')!;
    expect(Buffer.from(secret.data.REDIS_URL, 'base64').toString()).toBe('redis://redis.example:6379');
    const config = byKind(objects, 'ConfigMap').find((c) => c.metadata.name === 'rel-agentplane-config')!;
    expect(config.data).not.toHaveProperty('REDIS_URL');
  });

  it('redis.clusterNodes or redis.sentinels, with passwords and TLS, leave the bundled Redis out and set the variables', () => {
    const cluster = render(
      ...valueArgs({ redis: { clusterNodes: 'redis-0:6379,redis-1:6379', password: 'data-secret', tls: { enabled: true, caFile: '/etc/agentplane/redis-ca/ca.crt' } } }),
    );
    expect(byKind(cluster, 'StatefulSet')).toEqual([]);
    const config = byKind(cluster, 'ConfigMap').find((c) => c.metadata.name === 'rel-agentplane-config')!;
    expect(config.data).toMatchObject({ REDIS_CLUSTER_NODES: 'redis-0:6379,redis-1:6379', REDIS_TLS: 'true', REDIS_TLS_CA_FILE: '/etc/agentplane/redis-ca/ca.crt' });
    expect(config.data).not.toHaveProperty('REDIS_URL');
    const secret = byKind(cluster, 'Secret').find((x) => x.metadata.name === 'rel-agentplane')!;
    expect(Buffer.from(secret.data.REDIS_PASSWORD, 'base64').toString()).toBe('data-secret');
    const sentinel = render('--set', 'redis.sentinels=s-0:26379\\,s-1:26379', '--set', 'redis.sentinelMasterName=main', '--set', 'redis.sentinelPassword=s-secret');
    expect(byKind(sentinel, 'StatefulSet')).toEqual([]);
    const sentinelConfig = byKind(sentinel, 'ConfigMap').find((c) => c.metadata.name === 'rel-agentplane-config')!;
    expect(sentinelConfig.data).toMatchObject({ REDIS_SENTINELS: 's-0:26379,s-1:26379', REDIS_SENTINEL_NAME: 'main' });
    const sentinelSecret = byKind(sentinel, 'Secret').find((x) => x.metadata.name === 'rel-agentplane')!;
    expect(Buffer.from(sentinelSecret.data.REDIS_SENTINEL_PASSWORD, 'base64').toString()).toBe('s-secret');
  });

  it('the defaults bring the bundled Redis and point every process at it', () => {
    const objects = render();
    expect(byKind(objects, 'StatefulSet').map((s) => s.metadata.name)).toEqual(['rel-agentplane-redis']);
    const config = byKind(objects, 'ConfigMap').find((c) => c.metadata.name === 'rel-agentplane-config')!;
    expect(config.data.REDIS_URL).toBe('redis://rel-agentplane-redis:6379');
  });

  it('every process listens on every interface of its pod, and the probes send a loopback Host, always answered', () => {
    const objects = render('--set', 'webhooks.enabled=true', '--set-string', 'webhooks.config.WEBHOOK_INSECURE=true');
    const config = byKind(objects, 'ConfigMap').find((c) => c.metadata.name === 'rel-agentplane-config')!;
    expect(config.data).toMatchObject({ SERVICE_HOST: '0.0.0.0', SERVICE_ALLOWED_HOSTS: '*' });
    const webhooks = byKind(objects, 'ConfigMap').find((c) => c.metadata.name === 'rel-agentplane-webhooks')!;
    expect(webhooks.data.WEBHOOK_HOST).toBe('0.0.0.0');
    for (const component of ['api', 'worker', 'webhooks']) {
      const probes = ['startupProbe', 'livenessProbe', 'readinessProbe'].map((probe) => container(deployment(objects, component))[probe]).filter(Boolean);
      expect(probes.length, component).toBeGreaterThanOrEqual(2);
      for (const probe of probes) expect(probe.httpGet.httpHeaders, component).toEqual([{ name: 'Host', value: 'localhost' }]);
    }
  });

  it('--set webhooks.enabled=true renders with a secret, a signature key, an existing secret or WEBHOOK_INSECURE', () => {
    for (const extra of [
      ['--set', 'webhooks.secrets.WEBHOOK_SECRET=hook-secret'],
      ['--set', 'webhooks.config.WEBHOOK_SIGNATURE=github', '--set', 'webhooks.secrets.WEBHOOK_SIGNING_SECRET=gh'],
      ['--set', 'webhooks.existingSecret=hooks'],
      ['--set-string', 'webhooks.config.WEBHOOK_INSECURE=true'],
    ]) {
      expect(() => render('--set', 'webhooks.enabled=true', ...extra), extra.join(' ')).not.toThrow();
    }
  });

  it('--set config.SERVICE_AUTH=jwt renders once a key is given', () => {
    expect(() => render('--set', 'config.SERVICE_AUTH=jwt', '--set', 'secrets.SERVICE_JWT_SECRET=a-shared-secret-of-at-least-32-bytes!')).not.toThrow();
    expect(() => render('--set', 'config.SERVICE_AUTH=jwt', '--set', 'config.SERVICE_JWT_JWKS_URL=https://idp.example/jwks.json')).not.toThrow();
    expect(() => render('--set', 'config.SERVICE_AUTH=apikey', '--set', 'existingSecret=agentplane-auth')).not.toThrow();
  });

  it.each([
    ['jwt without a key', ['--set', 'config.SERVICE_AUTH=jwt'], 'config.SERVICE_AUTH=jwt needs a key: secrets.SERVICE_JWT_SECRET'],
    ['apikey without keys', ['--set', 'config.SERVICE_AUTH=apikey'], 'config.SERVICE_AUTH=apikey needs keys: secrets.SERVICE_API_KEYS'],
    ['no Redis at all', ['--set', 'redis.bundled.enabled=false'], 'agentplane needs a Redis: set redis.url=redis://host:6379'],
    [
      'redis.url beside an existingSecret',
      ['--set', 'existingSecret=agentplane', '--set', 'redis.url=redis://r:6379'],
      'redis.url is not used with existingSecret: put REDIS_URL in the Secret "agentplane"',
    ],
    [
      'two Redis at once',
      ['--set', 'redis.url=redis://r:6379', '--set', 'redis.clusterNodes=c:6379'],
      'set only one of redis.url, redis.clusterNodes and redis.sentinels',
    ],
    ['an unknown key', ['--set', 'replicaCount=3'], "additional properties 'replicaCount' not allowed"],
    [
      'a receiver open to anyone',
      ['--set', 'webhooks.enabled=true'],
      'webhooks.enabled=true would accept deliveries from anyone: set webhooks.secrets.WEBHOOK_SECRET',
    ],
    [
      'a signature scheme without its key',
      ['--set', 'webhooks.enabled=true', '--set', 'webhooks.config.WEBHOOK_SIGNATURE=github'],
      'webhooks.config.WEBHOOK_SIGNATURE=github needs its key: webhooks.secrets.WEBHOOK_SIGNING_SECRET',
    ],
  ])('refuses %s with a message naming what to set', (_name, args, message) => {
    expect(refusal(...args)).toContain(message);
  });
});

/** What `helm install` prints once installed (NOTES.txt), rendered on the client without a cluster. */
function notes(...args: string[]): string {
  const run = helm(['install', 'rel', CHART, '--namespace', 'agents', '--dry-run=client', ...args]);
  if (run.status !== 0) throw new Error(run.stderr.trim());
  const at = run.stdout.indexOf('\nNOTES:\n');
  expect(at, run.stdout.slice(-500)).toBeGreaterThanOrEqual(0);
  return run.stdout.slice(at + '\nNOTES:\n'.length);
}

/** The lines of the chat gateway's part of the notes, spaces squeezed; [] when there is none. */
function chatLines(text: string): string[] {
  const start = text.indexOf('The chat gateway');
  if (start < 0) return [];
  return text
    .slice(start, text.indexOf('\n\n', start))
    .split('\n')
    .slice(2)
    .map((line) => line.trim().replace(/\s+/g, ' '));
}

describe('helm/agentplane NOTES.txt: the URLs to give the chat platforms', () => {
  const SECRETS = { SLACK_BOT_TOKEN: 'xoxb-secret-1', SLACK_SIGNING_SECRET: 'signing-secret-2', DISCORD_BOT_TOKEN: 'discord-secret-3', TELEGRAM_BOT_TOKEN: '1:telegram-secret-4', TELEGRAM_SECRET_TOKEN: 'telegram-secret-5' };

  it('say nothing of chat when no platform is on', () => {
    expect(notes()).not.toContain('chat gateway');
    // An existing Secret alone tells nothing of which platforms it holds.
    expect(notes('--set', 'chat.existingSecret=chat')).not.toContain('chat gateway');
  });

  it("print each configured platform's URL on the Ingress host, and never a secret", () => {
    const text = notes(
      ...valueArgs({
        ingress: { enabled: true, tls: [{ secretName: 'agentplane-tls', hosts: ['agentplane.example.com'] }] },
        chat: { secrets: SECRETS, config: { DISCORD_PUBLIC_KEY: 'a'.repeat(64) } },
      }),
    );
    expect(chatLines(text)).toEqual([
      'Slack Event Subscriptions URL https://agentplane.example.com/slack/events',
      'Interactivity URL https://agentplane.example.com/slack/interactions',
      'Discord Interactions Endpoint URL https://agentplane.example.com/discord/interactions',
      'Telegram setWebhook url https://agentplane.example.com/telegram/webhook (secret_token: TELEGRAM_SECRET_TOKEN)',
    ]);
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  });

  it('use the HTTPRoute host; Telegram polling needs no URL', () => {
    const text = notes(...valueArgs({ httpRoute: { enabled: true, hostnames: ['chat.example.org'] }, chat: { secrets: { DISCORD_BOT_TOKEN: 'd', TELEGRAM_BOT_TOKEN: 't' }, config: { TELEGRAM_MODE: 'polling' } } }));
    expect(chatLines(text)).toEqual([
      'Discord Interactions Endpoint URL https://chat.example.org/discord/interactions',
      'Telegram no URL (TELEGRAM_MODE=polling: one API pod at a time asks Telegram for updates)',
    ]);
    expect(chatLines(notes(...valueArgs({ chat: { secrets: { TELEGRAM_BOT_TOKEN: 't' }, config: { TELEGRAM_MODE: 'polling' } } })))).toEqual([
      'Telegram no URL (TELEGRAM_MODE=polling: one API pod at a time asks Telegram for updates)',
    ]);
  });

  it('with chat.existingSecret, list the platforms whose settings are set; without Ingress or HTTPRoute, say what to route', () => {
    const text = notes(...valueArgs({ chat: { existingSecret: 'chat', config: { SLACK_APPROVERS: 'U0123:user' } } }));
    expect(chatLines(text)).toEqual([
      'Slack Event Subscriptions URL https://<your public host>/slack/events',
      'Interactivity URL https://<your public host>/slack/interactions',
      'No Ingress or HTTPRoute is enabled: route a public HTTPS address to the Service rel-agentplane-api.',
    ]);
  });

  it('on an Ingress without TLS, print http:// URLs and say the platforms call HTTPS only', () => {
    const text = notes(...valueArgs({ ingress: { enabled: true }, chat: { secrets: { TELEGRAM_BOT_TOKEN: 't', TELEGRAM_SECRET_TOKEN: 's' } } }));
    expect(chatLines(text)).toEqual([
      'Telegram setWebhook url http://agentplane.example.com/telegram/webhook (secret_token: TELEGRAM_SECRET_TOKEN)',
      'ingress.tls is empty: the platforms call HTTPS URLs only; give them https:// if TLS ends in front of the Ingress.',
    ]);
  });
});
