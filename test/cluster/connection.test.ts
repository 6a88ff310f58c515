import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { call, startTestApi } from '../support/app.js';
import { startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { makeCertificates, startPrivateRedis, type TlsFiles } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/** The connection settings: how config.ts reads them, and a TLS cluster with a password used by every client of a process. */
describe('connection settings', () => {
  const configError = (env: Record<string, string>): ConfigError => {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('reads a cluster from its nodes and a Sentinel set with its master name and passwords', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'redis-0:6379, redis-1:6380,[::1]:7000' }).redis).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'redis-0', port: 6379 },
        { host: 'redis-1', port: 6380 },
        { host: '::1', port: 7000 },
      ],
      auth: {},
    });
    expect(
      loadConfig({ REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_NAME: 'main', REDIS_PASSWORD: 'p', REDIS_SENTINEL_PASSWORD: 'sp', REDIS_TLS: 'true' }).redis,
    ).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'main',
      auth: { password: 'p' },
      sentinelPassword: 'sp',
      tls: {},
    });
    expect(loadConfig({ REDIS_URL: 'redis://localhost:6379' }).redis).toEqual({ mode: 'single', url: 'redis://localhost:6379' });
    expect(loadConfig({}).redis).toBeUndefined();
  });

  it('refuses two modes at once, a node without a port, credentials beside a URL and an unreadable CA file, naming the variable', () => {
    expect(configError({ REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'b:6379' }).variable).toBe('REDIS_CLUSTER_NODES');
    expect(configError({ REDIS_CLUSTER_NODES: 'b:6379', REDIS_SENTINELS: 'c:26379' }).variable).toBe('REDIS_SENTINELS');
    expect(configError({ REDIS_CLUSTER_NODES: 'redis-0' })).toMatchObject({ variable: 'REDIS_CLUSTER_NODES', message: expect.stringContaining('"redis-0" is not host:port') });
    expect(configError({ REDIS_SENTINELS: 's1:99999' }).variable).toBe('REDIS_SENTINELS');
    expect(configError({ REDIS_URL: 'redis://a:6379', REDIS_PASSWORD: 'secret' }).variable).toBe('REDIS_PASSWORD');
    expect(configError({ REDIS_CLUSTER_NODES: 'b:6379', REDIS_TLS: 'true', REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' }).variable).toBe('REDIS_TLS_CA_FILE');
  });
});

describe('TLS and passwords', () => {
  let dir: string;
  let tls: TlsFiles;
  let cluster: TestRedisCluster;
  const password = 'cluster-secret';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-tls-'));
    tls = makeCertificates(dir);
    cluster = await startRedisCluster({ password, tls });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs on a TLS cluster with a password: store, sharded events and BullMQ all connect with REDIS_TLS, REDIS_TLS_CA_FILE and REDIS_PASSWORD', async () => {
    const app = await startTestApi({ env: { REDIS_CLUSTER_NODES: cluster.nodes, REDIS_PASSWORD: password, REDIS_TLS: 'true', REDIS_TLS_CA_FILE: tls.caFile } });
    onTestFinished(() => app.close());
    app.composition.startExecuting();
    await waitFor('the API to be ready', async () => (await call(`${app.url}/health/ready`)).status === 200);
    const done = await call(`${app.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', input: { text: 'over tls' }, wait_ms: 20_000 } });
    expect(done).toMatchObject({ status: 200, body: { status: 'completed', state: { text: 'over tls', echoed: true } } });
  });

  it('is not ready without the CA (the server certificate is not trusted), nor with a wrong password, and logs why', async () => {
    const wrong = 'not-the-cluster-secret';
    for (const [env, why] of [
      [{ REDIS_CLUSTER_NODES: cluster.nodes, REDIS_PASSWORD: password, REDIS_TLS: 'true' }, /./],
      [{ REDIS_CLUSTER_NODES: cluster.nodes, REDIS_PASSWORD: wrong, REDIS_TLS: 'true', REDIS_TLS_CA_FILE: tls.caFile }, /WRONGPASS/],
    ] as const) {
      const app = await startTestApi({ env });
      try {
        await waitFor('the reason in the log', () => app.logs.find((l) => /is unreachable/.test(String(l.msg)) && why.test(JSON.stringify(l.err))));
        for (const secret of [password, wrong]) expect(JSON.stringify(app.logs)).not.toContain(secret);
        expect(await call(`${app.url}/health/ready`)).toMatchObject({ status: 503, body: { checks: { redis: 'unavailable' } } });
      } finally {
        await app.close();
      }
    }
  });

  it('trusts REDIS_TLS_CA_FILE for a rediss:// URL too', async () => {
    const server = await startPrivateRedis({ tls });
    onTestFinished(() => server.stop());
    const app = await startTestApi({ env: { REDIS_URL: server.url, REDIS_TLS_CA_FILE: tls.caFile } });
    onTestFinished(() => app.close());
    await waitFor('the API to be ready', async () => (await call(`${app.url}/health/ready`)).status === 200);
  });
});
