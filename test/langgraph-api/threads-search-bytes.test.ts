import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { startTestApi, type TestApi } from '../support/app.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/**
 * POST /threads/search answers pages bounded in bytes, as a history page is: it stops at
 * SERVICE_MAX_PAGE_BYTES of JSON (one thread always fits) and says where to go on
 * (X-Pagination-Next); following it gets every thread once. Values of two-byte characters, so
 * the bound is in UTF-8 bytes, not string length.
 */
const T = 'DefaultTenant';
const PAGE_BYTES = 1024 * 1024;
const THREADS = 24;
/** ~200 KB of UTF-8 per thread (100,000 two-byte characters): five fit a page, 24 make ~4.8 MB. */
const VALUE = 'é'.repeat(100_000);

describe.each(['memory', 'redis'] as const)('POST /threads/search in bytes on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  /** Thread ids as a search sorts them by default: newest first (ties, in one millisecond, by id). */
  let ids: string[] = [];

  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    app = await startTestApi({ ...(redis ? { redisUrl: redis.url } : {}), env: { SERVICE_MAX_PAGE_BYTES: String(PAGE_BYTES) } });
    const created: string[] = [];
    for (let i = 0; i < THREADS; i += 1) {
      const id = randomUUID();
      await app.backend.store.runs.createRun(T, { run_id: randomUUID(), session_id: id, agent_id: 'echo', start: { node_id: 'receive', input: { n: i, blob: VALUE } } });
      created.push(id);
    }
    const sessions = await app.backend.store.sessions.listSessions(T, { offset: 0, limit: THREADS });
    ids = sessions.map((session) => session.id);
    expect([...ids].sort()).toEqual([...created].sort());
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  async function search(body: Record<string, unknown>) {
    const response = await fetch(`${app.url}/threads/search`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const bytes = Buffer.from(await response.arrayBuffer());
    return { status: response.status, next: response.headers.get('X-Pagination-Next'), bytes: bytes.length, threads: JSON.parse(bytes.toString('utf8')) as { thread_id: string; values?: { n: number } }[] };
  }

  /** Follows X-Pagination-Next from offset 0; every page 200 and within the bound. */
  async function everyPage(body: Record<string, unknown>) {
    const pages: Awaited<ReturnType<typeof search>>[] = [];
    for (let offset = 0; ; ) {
      const page = await search({ ...body, offset });
      expect(page.status).toBe(200);
      pages.push(page);
      if (page.next === null) return pages;
      expect(Number(page.next)).toBe(offset + page.threads.length);
      offset = Number(page.next);
      expect(pages.length).toBeLessThanOrEqual(THREADS);
    }
  }

  it('stops a page at SERVICE_MAX_PAGE_BYTES and says where to go on; the continuations get the rest, once each', async () => {
    const pages = await everyPage({ limit: 1000 });
    for (const page of pages) {
      expect(page.bytes).toBeLessThanOrEqual(PAGE_BYTES);
      expect(page.threads.length).toBeGreaterThan(0);
    }
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.flatMap((page) => page.threads.map((t) => t.thread_id))).toEqual(ids);
  });

  it('bounds a page sorted otherwise the same way (a sort that reads every thread first)', async () => {
    const pages = await everyPage({ limit: 1000, sort_by: 'thread_id', sort_order: 'asc' });
    for (const page of pages) expect(page.bytes).toBeLessThanOrEqual(PAGE_BYTES);
    expect(pages.flatMap((page) => page.threads.map((t) => t.thread_id))).toEqual([...ids].sort());
  });

  it('counts what is sent: with select, small threads fill one page up to its limit', async () => {
    const page = await search({ limit: 1000, select: ['thread_id', 'status'] });
    expect(page.status).toBe(200);
    expect(page.next).toBeNull();
    expect(page.threads.map((t) => t.thread_id)).toEqual(ids);
  });

  it('answers one thread larger than the bound alone, never a 500', async () => {
    const [id, runId] = [randomUUID(), randomUUID()];
    await app.backend.store.runs.createRun(T, { run_id: runId, session_id: id, agent_id: 'echo', start: { node_id: 'receive', input: { big: 'x'.repeat(PAGE_BYTES + 1) } } });
    try {
      const page = await search({ limit: 10, ids: [id, ids[0]!] });
      expect(page.status).toBe(200);
      expect(page.threads.map((t) => t.thread_id)).toEqual([id]);
      expect(page.next).toBe('1');
      const rest = await search({ limit: 10, ids: [id, ids[0]!], offset: 1 });
      expect(rest.threads.map((t) => t.thread_id)).toEqual([ids[0]]);
      expect(rest.next).toBeNull();
    } finally {
      await app.backend.store.runs.updateRun(T, runId, { status: 'cancelled' });
      await app.backend.store.sessions.deleteSession(T, id);
    }
  });

  it('the SDK reads a bounded page as any other', async () => {
    const client = new Client({ apiUrl: app.url });
    const page = await client.threads.search({ limit: 1000 });
    expect(page.length).toBeGreaterThan(0);
    expect(page.length).toBeLessThan(THREADS);
    expect(page.map((t) => t.thread_id)).toEqual(ids.slice(0, page.length));
  });
});
