import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { expectNoSecretsIn, send, startSecuredApi, type Answer, type SecuredApi } from '../auth/secured-api.js';
import { uniquePrefix, usePrivateRedis, useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * The limits over real HTTP on two API apps sharing one Redis, as two replicas do: a limit of
 * 20/60s admits 20 requests over both and refuses the 21st with 429, Retry-After and the
 * RateLimit fields; the same for the quotas per key (API key or JWT subject) and per tenant.
 * With the limiter's Redis stopped, requests are still served (and still limited per replica).
 */

const KEY_Q1 = 'lim-key-q1-8d2f';
const KEY_Q2 = 'lim-key-q2-51ac';
const KEY_R = 'lim-key-r-77e0';
const API_KEYS = `${KEY_Q1}:user:TenantQ,${KEY_Q2}:user:TenantQ,${KEY_R}:user:TenantR`;
const JWT_SECRET = 'limits-jwt-secret-with-32-bytes-at-least';
const logs: string[] = [];
const tokens: string[] = [];

const redis = useRedis();
const apps: SecuredApi[] = [];

// Runs before useRedis' afterAll (vitest runs a file's afterAll hooks last registered first): the apps close, then their Redis stops.
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** Two replicas: same Redis, same key prefix, same settings; each waits for its Redis. */
async function replicas(env: Record<string, string>, redisUrl = redis.url): Promise<[SecuredApi, SecuredApi]> {
  const shared = { REDIS_URL: redisUrl, SERVICE_KEY_PREFIX: uniquePrefix('limits'), ...env };
  const pair = [await startSecuredApi(shared, { logs }), await startSecuredApi(shared, { logs })] as [SecuredApi, SecuredApi];
  apps.push(...pair);
  // Until its connection is ready a replica counts in memory; the shared count starts after.
  for (const app of pair) await waitFor('the replica connected to Redis', async () => (await app.backend.store.ping(), true));
  return pair;
}

/** GET /api/agents touches no store, so it answers whatever state Redis is in. */
function hit(app: SecuredApi, headers: Record<string, string> = {}): Promise<Answer> {
  return send(`${app.url}/api/agents`, { headers });
}

/** 21 requests alternating between the replicas. */
async function alternate(pair: [SecuredApi, SecuredApi], headers: (i: number) => Record<string, string> = () => ({})): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < 21; i += 1) answers.push(await hit(pair[i % 2]!, headers(i)));
  return answers;
}

function expectTwentyThenRefused(answers: Answer[], limiter: string): void {
  expect(answers.map((a) => a.status)).toEqual([...Array<number>(20).fill(200), 429]);
  answers.slice(0, 20).forEach((answer, i) => {
    expect(answer.headers.get('RateLimit-Policy')).toBe(`"${limiter}";q=20;w=60`);
    expect(answer.headers.get('RateLimit')).toMatch(new RegExp(`^"${limiter}";r=${19 - i};t=\\d+$`));
  });
  const refused = answers[20]!;
  expect((refused.body as { error: { code: string } }).error.code).toBe('rate_limited');
  const retryAfter = Number(refused.headers.get('Retry-After'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  expect(refused.headers.get('RateLimit-Policy')).toBe(`"${limiter}";q=20;w=60`);
  const reset = /^"[a-z]+";r=0;t=(\d+)$/.exec(refused.headers.get('RateLimit') ?? '');
  expect(reset?.[0]).toContain(`"${limiter}"`);
  expect(Number(reset?.[1])).toBe(retryAfter);
}

async function refusals(app: SecuredApi, limiter: string): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`agentplane_rate_limited_total{limiter="${limiter}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('global limit per client address across two replicas', () => {
  it('refuses the 21st request over both with 429, Retry-After and RateLimit headers', async () => {
    const pair = await replicas({ SERVICE_RATE_LIMIT: '20/60s' });
    expectTwentyThenRefused(await alternate(pair), 'global');
    expect((await refusals(pair[0], 'global')) + (await refusals(pair[1], 'global'))).toBe(1);
  });

  it('never limits probes, metrics or the console, and never adds RateLimit fields to them', async () => {
    const pair = await replicas({ SERVICE_RATE_LIMIT: '1/60s' });
    expect((await hit(pair[0])).status).toBe(200);
    expect((await hit(pair[1])).status).toBe(429);
    for (const path of ['/healthz', '/health', '/health/live', '/health/ready', '/metrics', '/swagger/', '/swagger/doc.json']) {
      for (let i = 0; i < 3; i += 1) {
        const answer = await fetch(`${pair[i % 2]!.url}${path}`);
        await answer.body?.cancel();
        expect({ path, status: answer.status }).toEqual({ path, status: 200 });
        expect(answer.headers.get('RateLimit')).toBeNull();
      }
    }
  });

  it('counts the address the trusted proxy appended to X-Forwarded-For, only when SERVICE_TRUST_PROXY=true', async () => {
    const trusting = await replicas({ SERVICE_RATE_LIMIT: '1/60s', SERVICE_TRUST_PROXY: 'true' });
    expect((await hit(trusting[0], { 'X-Forwarded-For': '198.51.100.1, 203.0.113.7' })).status).toBe(200);
    // Entries the client wrote before the proxy's own do not make it a new client.
    expect((await hit(trusting[1], { 'X-Forwarded-For': '198.51.100.2, 203.0.113.7' })).status).toBe(429);
    expect((await hit(trusting[1], { 'X-Forwarded-For': '203.0.113.7, 203.0.113.8' })).status).toBe(200);

    const direct = await replicas({ SERVICE_RATE_LIMIT: '1/60s' });
    expect((await hit(direct[0], { 'X-Forwarded-For': '203.0.113.7' })).status).toBe(200);
    // Not trusted: a forged header does not make a new client; the socket address counts.
    expect((await hit(direct[1], { 'X-Forwarded-For': '198.51.100.1' })).status).toBe(429);
  });
});

describe('X-Forwarded-For only from the trusted proxies (review finding 5)', () => {
  it('a direct client outside SERVICE_TRUSTED_PROXIES cannot rotate the header to dodge the limit', async () => {
    // The tests connect from 127.0.0.1: trusting only 10.0.0.0/8 makes them a direct client.
    const pair = await replicas({ SERVICE_RATE_LIMIT: '5/60s', SERVICE_TRUST_PROXY: 'true', SERVICE_TRUSTED_PROXIES: '10.0.0.0/8' });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await hit(pair[i % 2]!, { 'X-Forwarded-For': `198.51.100.${i + 1}` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  });

  it('an entry that is not an IP address never becomes a limiter key: the proxy counts', async () => {
    const pair = await replicas({ SERVICE_RATE_LIMIT: '1/60s', SERVICE_TRUST_PROXY: 'true' });
    const junk = (n: number) => `${'x'.repeat(5_000)}${n}`;
    expect((await hit(pair[0], { 'X-Forwarded-For': junk(1) })).status).toBe(200);
    expect((await hit(pair[1], { 'X-Forwarded-For': junk(2) })).status).toBe(429);
    expect((await hit(pair[1], { 'X-Forwarded-For': `203.0.113.9, ${junk(3)}` })).status).toBe(429);
    // A valid client address behind the trusted proxy (loopback) still counts as its own client.
    expect((await hit(pair[0], { 'X-Forwarded-For': '203.0.113.10' })).status).toBe(200);
  });

  it('refuses a bad SERVICE_TRUSTED_PROXIES at startup, naming it', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(() => loadConfig({ SERVICE_TRUSTED_PROXIES: '10.0.0.0/8,not-an-ip' })).toThrow(/SERVICE_TRUSTED_PROXIES: "not-an-ip" is not an IP address or CIDR/);
    expect(() => loadConfig({ SERVICE_TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/SERVICE_TRUSTED_PROXIES/);
    expect(loadConfig({ SERVICE_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8' }).SERVICE_TRUSTED_PROXIES).toEqual(['10.0.0.0/8', 'fd00::/8']);
  });
});

describe('quotas across two replicas', () => {
  it('per API key: the 21st request of one key is refused, another key of the tenant is not', async () => {
    const pair = await replicas({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: API_KEYS, SERVICE_RATE_LIMIT: '1000/60s', SERVICE_QUOTA_PER_KEY: '20/60s' });
    expectTwentyThenRefused(await alternate(pair, () => ({ 'X-Api-Key': KEY_Q1 })), 'key');
    expect((await hit(pair[0], { 'X-Api-Key': KEY_Q2 })).status).toBe(200);
    expect((await refusals(pair[0], 'key')) + (await refusals(pair[1], 'key'))).toBe(1);
  });

  it('per JWT subject: two tokens of one subject share the quota', async () => {
    const pair = await replicas({ SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: JWT_SECRET, SERVICE_RATE_LIMIT: '1000/60s', SERVICE_QUOTA_PER_KEY: '20/60s' });
    const sign = (sub: string) =>
      new SignJWT({ tenant_id: 'TenantQ', roles: 'user', nonce: randomUUID() })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(sub)
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(JWT_SECRET));
    const own = [await sign('alice'), await sign('alice')];
    const other = await sign('bob');
    tokens.push(...own, other);
    expectTwentyThenRefused(await alternate(pair, (i) => ({ Authorization: `Bearer ${own[i % 2]}` })), 'key');
    expect((await hit(pair[1], { Authorization: `Bearer ${other}` })).status).toBe(200);
  });

  it('per JWT subject: callers whose tenant and subject join to the same text do not share a bucket', async () => {
    const pair = await replicas({ SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: JWT_SECRET, SERVICE_RATE_LIMIT: '1000/60s', SERVICE_QUOTA_PER_KEY: '20/60s' });
    const sign = (tenant: string, sub: string) =>
      new SignJWT({ tenant_id: tenant, roles: 'user', nonce: randomUUID() })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(sub)
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(JWT_SECRET));
    // `${tenant}:${kind}:${subject}` was "t1:jwt:s:jwt:z" for both.
    const first = await sign('t1:jwt:s', 'z');
    const second = await sign('t1', 's:jwt:z');
    tokens.push(first, second);
    expectTwentyThenRefused(await alternate(pair, () => ({ Authorization: `Bearer ${first}` })), 'key');
    expect((await hit(pair[0], { Authorization: `Bearer ${second}` })).status).toBe(200);
  });

  it('per tenant: the 21st request of a tenant over two keys is refused, another tenant is not', async () => {
    const pair = await replicas({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: API_KEYS, SERVICE_RATE_LIMIT: '1000/60s', SERVICE_QUOTA_PER_TENANT: '20/60s' });
    expectTwentyThenRefused(await alternate(pair, (i) => ({ 'X-Api-Key': i % 3 ? KEY_Q1 : KEY_Q2 })), 'tenant');
    expect((await hit(pair[0], { 'X-Api-Key': KEY_R })).status).toBe(200);
  });

  it('shows the limiter closest to its limit, and charges no quota for a refused credential', async () => {
    const pair = await replicas({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: API_KEYS, SERVICE_RATE_LIMIT: '100/60s', SERVICE_QUOTA_PER_TENANT: '5/60s' });
    const first = await hit(pair[0], { 'X-Api-Key': KEY_Q1 });
    expect(first.headers.get('RateLimit-Policy')).toBe('"tenant";q=5;w=60');
    expect((await hit(pair[1], { 'X-Api-Key': 'not-a-key' })).status).toBe(401);
    const second = await hit(pair[1], { 'X-Api-Key': KEY_Q1 });
    expect(second.headers.get('RateLimit')).toMatch(/^"tenant";r=3;t=\d+$/);
    // An anonymous 401 still carries the global limit it was counted against.
    const rejected = await hit(pair[0]);
    expect(rejected.status).toBe(401);
    expect(rejected.headers.get('RateLimit')).toMatch(/^"global";r=96;t=\d+$/);
  });
});

describe('when the Redis of the limiter stops', () => {
  const own = usePrivateRedis();

  it('still serves requests, limited per replica by the in-memory insurance', async () => {
    const pair = await replicas(
      { SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: API_KEYS, SERVICE_RATE_LIMIT: '20/60s', SERVICE_QUOTA_PER_KEY: '20/60s', SERVICE_QUOTA_PER_TENANT: '20/60s' },
      own.url,
    );
    expect((await hit(pair[0], { 'X-Api-Key': KEY_Q1 })).status).toBe(200);
    await own.kill();
    const during: number[] = [];
    for (let i = 0; i < 21; i += 1) during.push((await hit(pair[0], { 'X-Api-Key': KEY_Q1 })).status);
    expect(during).toEqual([...Array<number>(20).fill(200), 429]);
    expect((await hit(pair[1], { 'X-Api-Key': KEY_Q1 })).status).toBe(200);
    await own.restart();
  });
});

it('writes no API key, JWT secret or token into any log line', () => {
  expect(logs.some((line) => line.includes('"status":429'))).toBe(true);
  expectNoSecretsIn(logs, [KEY_Q1, KEY_Q2, KEY_R, JWT_SECRET, ...tokens]);
});
