import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/**
 * SERVICE_MAX_STATE_BYTES is UTF-8 bytes of JSON on both backends: a native thread's state of
 * two-byte characters, under the cap in characters but past it in bytes, is refused (413,
 * nothing written), so what a thread answers of its values stays within the cap.
 */
const CAP = 256 * 1024;
/** 200,000 two-byte characters: ~195 KiB as characters, ~391 KiB as UTF-8. */
const WIDE = 'é'.repeat(200_000);

describe.each(['memory', 'redis'] as const)('the state cap in UTF-8 bytes on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;

  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    app = await startTestApi({ ...(redis ? { redisUrl: redis.url } : {}), env: { SERVICE_MAX_STATE_BYTES: String(CAP) } });
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  async function thread(): Promise<string> {
    const created = await call(`${app.url}/threads`, { method: 'POST', json: { metadata: { graph_id: 'echo' } } });
    expect(created.status).toBe(200);
    const id = created.body.thread_id as string;
    expect((await call(`${app.url}/threads/${id}/state`, { method: 'POST', json: { values: { small: 1 } } })).status).toBe(200);
    return id;
  }

  it('refuses a state past the cap in bytes though under it in characters, writing nothing', async () => {
    const id = await thread();
    const update = await call(`${app.url}/threads/${id}/state`, { method: 'POST', json: { values: { wide: WIDE } } });
    expect(update.status).toBe(413);
    expect(update.body.error.code).toBe('payload_too_large');
    const state = await call(`${app.url}/threads/${id}/state`);
    expect(state.body.values).toEqual({ small: 1 });
  });

  it('answers at most the cap of values: the state, the thread and its history', async () => {
    const id = await thread();
    // Just under the cap in bytes: accepted on both backends.
    const fits = 'é'.repeat((CAP - 64) / 2);
    expect((await call(`${app.url}/threads/${id}/state`, { method: 'POST', json: { values: { wide: fits } } })).status).toBe(200);
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
    const state = await call(`${app.url}/threads/${id}/state`);
    const got = await call(`${app.url}/threads/${id}`);
    const history = await call(`${app.url}/threads/${id}/history`, { method: 'POST', json: { limit: 1 } });
    expect(state.body.values.wide).toBe(fits);
    for (const values of [state.body.values, got.body.values, history.body[0].values]) expect(bytes(values)).toBeLessThanOrEqual(CAP);
  });
});
