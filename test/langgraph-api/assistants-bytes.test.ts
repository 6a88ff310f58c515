import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Redis } from 'ioredis';
import { builtInAgents } from '../../src/agents/index.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { graphAgent } from '../support/langgraph.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/**
 * Stored assistants are bounded in bytes, as the store and thread search are: a tenant's
 * assistants with every version take at most SERVICE_ASSISTANTS_MAX_BYTES (413 past it, nothing
 * written); a search page stops at SERVICE_MAX_PAGE_BYTES of JSON and says where to go on; a
 * count reads no assistant. Context of two-byte characters, so the bounds are UTF-8 bytes.
 */
const T = 'DefaultTenant';
const CAP_BYTES = 256 * 1024;
const PAGE_BYTES = 32 * 1024;
/** ~10 KB of UTF-8 an assistant: it costs ~20 KB stored (the assistant and its version 1). */
const BLOB = 'é'.repeat(5_000);

const noop = new StateGraph(Annotation.Root({ n: Annotation<number> }))
  .addNode('step', () => ({}))
  .addEdge(START, 'step')
  .addEdge('step', END)
  .compile();
const agents = () => new AgentRegistry([...builtInAgents, graphAgent('lg-noop', noop, ['step']), graphAgent('lg-other', noop, ['step'])]);
const DEFAULTS = builtInAgents.length + 2;

interface Answer {
  status: number;
  bytes: number;
  next: string | null;
  total: string | null;
  body: { assistant_id: string; error?: { code: string; message: string } }[] & { error?: { code: string; message: string } };
}

describe.each(['memory', 'redis'] as const)('stored assistants in bytes on %s', (backend) => {
  let redis: TestRedis | undefined;
  let app: TestApi;
  /** The assistants stored before the cap refused one, in creation order. */
  const stored: string[] = [];

  async function post(path: string, json: unknown): Promise<Answer> {
    const response = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(json) });
    const bytes = Buffer.from(await response.arrayBuffer());
    return {
      status: response.status,
      bytes: bytes.length,
      next: response.headers.get('X-Pagination-Next'),
      total: response.headers.get('X-Pagination-Total'),
      body: JSON.parse(bytes.toString('utf8')) as Answer['body'],
    };
  }

  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
    app = await startTestApi({
      agents: agents(),
      ...(redis ? { redisUrl: redis.url } : {}),
      env: { SERVICE_ASSISTANTS_MAX_BYTES: String(CAP_BYTES), SERVICE_MAX_PAGE_BYTES: String(PAGE_BYTES) },
    });
    for (let i = 0; ; i += 1) {
      const created = await post('/assistants', { graph_id: i % 3 === 0 ? 'lg-other' : 'lg-noop', name: `n${i}`, context: { blob: BLOB } });
      if (created.status !== 200) {
        expect(created.status).toBe(413);
        expect(created.body.error!.code).toBe('payload_too_large');
        expect(created.body.error!.message).toMatch(/SERVICE_ASSISTANTS_MAX_BYTES/);
        break;
      }
      stored.push((created.body as unknown as { assistant_id: string }).assistant_id);
      expect(stored.length).toBeLessThan(20);
    }
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('refuses an assistant or a version past SERVICE_ASSISTANTS_MAX_BYTES with 413, storing nothing; a deletion makes room', async () => {
    // ~20 KB each: a 256 KiB cap holds 12.
    expect(stored).toHaveLength(12);
    expect(await app.backend.assistants.usedBytes(T)).toBeLessThanOrEqual(CAP_BYTES);
    expect((await post('/assistants/count', {})).body).toBe(DEFAULTS + stored.length);
    const patch = await call(`${app.url}/assistants/${stored[0]}`, { method: 'PATCH', json: { context: { blob: BLOB, more: BLOB } } });
    expect(patch.status).toBe(413);
    expect(patch.body.error.message).toMatch(/SERVICE_ASSISTANTS_MAX_BYTES/);
    const versions = await post(`/assistants/${stored[0]}/versions`, {});
    expect(versions.body.map((v) => (v as unknown as { version: number }).version)).toEqual([1]);
    // Another tenant's cap is its own.
    expect(await app.backend.assistants.create('OtherTenant', { assistant_id: 'x', graph_id: 'lg-noop', name: 'x', description: null, config: {}, context: { blob: BLOB }, metadata: {}, version: 1, created_at: '', updated_at: '' })).toBeNull();
    await app.backend.assistants.delete('OtherTenant', 'x');

    const last = stored.pop()!;
    expect((await call(`${app.url}/assistants/${last}`, { method: 'DELETE' })).status).toBe(204);
    const again = await post('/assistants', { graph_id: 'lg-noop', name: 'again', context: { blob: BLOB } });
    expect(again.status).toBe(200);
    stored.push((again.body as unknown as { assistant_id: string }).assistant_id);
  });

  it('stops a search page at SERVICE_MAX_PAGE_BYTES and says where to go on; the continuations get every assistant once', async () => {
    const seen: string[] = [];
    let pages = 0;
    for (let offset = 0; ; pages += 1) {
      const page = await post('/assistants/search', { limit: 1000, offset, sort_by: 'name', sort_order: 'asc' });
      expect(page.status).toBe(200);
      expect(page.bytes).toBeLessThanOrEqual(PAGE_BYTES);
      expect(page.body.length).toBeGreaterThan(0);
      expect(page.total).toBe(String(DEFAULTS + stored.length));
      seen.push(...page.body.map((a) => a.assistant_id));
      if (page.next === null) break;
      expect(Number(page.next)).toBe(offset + page.body.length);
      offset = Number(page.next);
      expect(pages).toBeLessThan(DEFAULTS + stored.length);
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen).toHaveLength(DEFAULTS + stored.length);
    expect(new Set(seen)).toEqual(new Set([...stored, ...(await post('/assistants/search', { limit: 1000, metadata: { created_by: 'system' } })).body.map((a) => a.assistant_id)]));
    // Selected fields only: small assistants fill a page up to its limit.
    const small = await post('/assistants/search', { limit: 1000, select: ['assistant_id', 'name'] });
    expect(small.body).toHaveLength(DEFAULTS + stored.length);
    expect(small.next).toBeNull();
  });

  it('counts without reading an assistant, of one graph too', async () => {
    const others = stored.filter((_, i) => i % 3 === 0).length;
    if (backend === 'memory') {
      const reads = [vi.spyOn(app.backend.assistants, 'getMany'), vi.spyOn(app.backend.assistants, 'get')];
      expect((await post('/assistants/count', {})).body).toBe(DEFAULTS + stored.length);
      expect((await post('/assistants/count', { graph_id: 'lg-other' })).body).toBe(1 + others);
      for (const read of reads) expect(read).not.toHaveBeenCalled();
      for (const read of reads) read.mockRestore();
      return;
    }
    // On Redis: an assistant whose JSON cannot be read is counted all the same (nothing reads it).
    const direct = new Redis(redis!.url);
    try {
      const key = `${app.config.SERVICE_KEY_PREFIX}:{${T}}:assistants`;
      const kept = await direct.hget(key, stored[0]!);
      expect(kept).not.toBeNull();
      await direct.hset(key, stored[0]!, 'not JSON');
      try {
        expect((await post('/assistants/count', {})).body).toBe(DEFAULTS + stored.length);
        expect((await post('/assistants/count', { graph_id: 'lg-other' })).body).toBe(1 + others);
      } finally {
        await direct.hset(key, stored[0]!, kept!);
      }
    } finally {
      direct.disconnect();
    }
  });
});
