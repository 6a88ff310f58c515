import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { startProcess } from '../support/processes.js';

/*
 * The LangGraph plug-in (src/langgraph/) is loaded only when graphs are configured: the embedded
 * server without SERVICE_LANGGRAPH_JSON, serving runs on both of its faces (/api and the
 * LangGraph Server API), resolves nothing of @langchain/*. A module hook in the process
 * (test/fixtures/module-log/) writes every @langchain/* module it resolves to a file; the same
 * process with graphs shows the hook sees LangGraph when it is loaded.
 */

const CONFIG = 'test/fixtures/langgraph/langgraph.json';
const HOOK = pathToFileURL(join(import.meta.dirname, '../fixtures/module-log/register.mjs')).href;
const dir = mkdtempSync(join(tmpdir(), 'agentplane-module-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the embedded API with the module hook, lets `use` call it, stops it; answers the @langchain/* modules it resolved. */
async function langchainModulesOf(name: string, env: Record<string, string>, use: (url: string) => Promise<void>): Promise<string[]> {
  const log = join(dir, `${name}.log`);
  const api = await startProcess({
    entry: 'src/main/api.ts',
    env: {
      ...env,
      REDIS_URL: undefined,
      LOG_LEVEL: 'warn',
      AGENTPLANE_MODULE_LOG: log,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${HOOK}`.trim(),
    },
    readyTimeoutMs: 150_000,
  });
  try {
    await use(api.url);
  } finally {
    expect(await api.stop()).toBe(0);
  }
  let lines: string[] = [];
  try {
    lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return [...new Set(lines.map((url) => /\/node_modules\/(@langchain\/[^/]+)\//.exec(url)?.[1] ?? url))].sort();
}

describe('the LangGraph plug-in, loaded only when graphs are configured', () => {
  it('embedded without SERVICE_LANGGRAPH_JSON: runs on /api and on the LangGraph Server API, and nothing of @langchain/* loaded', async () => {
    const loaded = await langchainModulesOf('no-graphs', {}, async (url) => {
      const run = await call(`${url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'echo', input: { text: 'hi' } } });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      expect(run.body).toMatchObject({ status: 'completed' });
      const [assistant] = (await call(`${url}/assistants/search`, { method: 'POST', json: { graph_id: 'echo' } })).body as { assistant_id: string }[];
      expect((await call(`${url}/assistants/${assistant!.assistant_id}/graph`)).status).toBe(200);
      expect((await call(`${url}/assistants/${assistant!.assistant_id}/schemas`)).status).toBe(200);
      const thread = (await call(`${url}/threads`, { method: 'POST', json: {} })).body as { thread_id: string };
      const waited = await call(`${url}/threads/${thread.thread_id}/runs/wait`, { method: 'POST', json: { assistant_id: 'echo', input: { text: 'hi' } } });
      expect(waited.status, JSON.stringify(waited.body)).toBe(200);
      expect((await call(`${url}/threads/${thread.thread_id}/state`)).status).toBe(200);
    });
    expect(loaded).toEqual([]);
  }, 240_000);

  it('with SERVICE_LANGGRAPH_JSON: the hook sees @langchain/langgraph loaded', async () => {
    const loaded = await langchainModulesOf('graphs', { SERVICE_LANGGRAPH_JSON: CONFIG }, async (url) => {
      expect((await call(`${url}/api/agents`)).status).toBe(200);
    });
    expect(loaded).toEqual(expect.arrayContaining(['@langchain/core', '@langchain/langgraph']));
  }, 240_000);
});
