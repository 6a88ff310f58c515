import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { parsePrometheus, type MetricFamily } from '../support/http.js';
import { waitFor } from '../support/wait.js';

/*
 * The storage gauges of the embedded (in-memory) backend. Its store lives in the API's own
 * heap, so there is no backend memory to report apart from the process's
 * (process_resident_memory_bytes, nodejs_heap_size_used_bytes): agentplane_storage_memory_bytes
 * is left out rather than reading 0, and what the store holds is counted in
 * agentplane_storage_items. (On Redis, test/http/metrics.test.ts reads used_memory.)
 */
describe('/metrics of the embedded backend', () => {
  let api: TestApi;
  const scrape = async (): Promise<Map<string, MetricFamily>> => parsePrometheus(await (await fetch(`${api.url}/metrics`)).text());

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('leaves agentplane_storage_memory_bytes out and reports the process memory instead', async () => {
    expect(api.backend.mode).toBe('memory');
    const families = await scrape();
    expect(families.has('agentplane_storage_memory_bytes')).toBe(false);
    expect(Number(families.get('process_resident_memory_bytes')?.metrics[0]?.value)).toBeGreaterThan(0);
  });

  it('counts the sessions and schedules the store holds', async () => {
    for (let i = 0; i < 3; i += 1) expect((await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo' } })).status).toBe(202);
    expect((await call(`${api.url}/api/schedules`, { method: 'POST', json: { agent_id: 'echo', cron_expr: '0 0 1 1 *' } })).status).toBe(201);
    await waitFor('the storage gauges to count them', async () => {
      const items = new Map((await scrape()).get('agentplane_storage_items')?.metrics.map((m) => [m.labels?.kind, Number(m.value)]));
      return items.get('sessions') === 3 && items.get('schedules') === 1 && !items.has('keys');
    });
  });
});
