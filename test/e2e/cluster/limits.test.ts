import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../support/cluster.js';

let cluster: Cluster;

// Three processes and more, each compiling the sources with tsx: minutes on a loaded 2-core machine.
beforeAll(async () => {
  cluster = await startCluster({ apis: 2, workers: 0, env: { SERVICE_RATE_LIMIT: '20/60s' } });
}, 300_000);
afterAll(async () => {
  await cluster?.stop();
}, 120_000);

it('shares the rate limit across replicas behind nginx, keyed by the address nginx saw', async () => {
  const replicas = new Set<string>();
  for (let i = 0; i < 20; i += 1) {
    // A forged X-Forwarded-For must not buy a fresh budget: nginx appends the real address.
    const response = await fetch(`${cluster.url}/api/sessions?limit=1`, { headers: { 'X-Forwarded-For': `10.0.0.${i}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-policy')).toContain('"global";q=20;w=60');
    replicas.add(response.headers.get('x-served-by') ?? '?');
    await response.arrayBuffer();
  }
  expect(replicas.size).toBe(2);
  const limited = await fetch(`${cluster.url}/api/sessions?limit=1`);
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(limited.headers.get('ratelimit')).toMatch(/"global";r=0;t=\d+/);
  expect(await limited.json()).toMatchObject({ error: { code: 'rate_limited' } });
  expect((await fetch(`${cluster.url}/health/ready`)).status).toBe(200);
});
