import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { loadGraphAgents } from '../../src/langgraph/load.js';
import { langgraphJsonCors } from '../../src/http/cors.js';
import { readLangGraphJson } from '../../src/langgraph/langgraph-json.js';
import { createAgentplane } from '../../src/main/embed.js';
import { createLogger } from '../../src/main/logger.js';
import { loadAgentsAndGraphs } from '../../src/main/process.js';
import { startTestApi, type TestApi } from '../support/app.js';

/*
 * A langgraph.json as LangGraph's server reads it (test/fixtures/langgraph-server/): an export
 * that is a Promise of a graph, a graph calling getLogger() of @langchain/langgraph-sdk/logging,
 * LANGGRAPH_CONFIG as per-graph default config and context (from the file's env or the
 * environment), agentplane's own path setting under its new name SERVICE_LANGGRAPH_JSON (the
 * old one still read, with a warning), and faults of `http.app` and `ui` in one line (both are served: test/langgraph-api/http-app.test.ts, ui.test.ts).
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/langgraph-server/', import.meta.url));
const CONFIG = join(FIXTURES, 'langgraph.json');
const work = mkdtempSync(join(tmpdir(), 'agentplane-lgjson-'));

/** A pino logger whose lines are kept, parsed. */
function keptLogger(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: createLogger('debug', sink), lines };
}

afterEach(() => {
  delete process.env.LANGGRAPH_CONFIG;
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('graphs as LangGraph server loads them, run through the API (memory)', () => {
  const kept = keptLogger();
  let api: TestApi;
  let client: Client;
  beforeAll(async () => {
    const registry = await loadAgentsAndGraphs(loadConfig({ SERVICE_LANGGRAPH_JSON: CONFIG }), undefined, kept.logger);
    delete process.env.LANGGRAPH_CONFIG;
    api = await startTestApi({ agents: registry });
    api.composition.startExecuting();
    client = new Client({ apiUrl: api.url, apiKey: null });
  });
  afterAll(() => api?.close());

  it('an export that is a Promise of a compiled graph is awaited, and runs', async () => {
    expect(await client.runs.wait(null, 'promised', { input: { word: 'w' } })).toEqual({ word: 'w', echoed: 'promised w' });
  });

  it("a graph calling getLogger() loads, and its lines are the process logger's", async () => {
    expect(kept.lines).toContainEqual(expect.objectContaining({ level: 30, msg: 'logging graph loaded', fixture: 'logging', source: 'graph' }));
    await client.runs.wait(null, 'logging', { input: { word: 'seen' } });
    expect(kept.lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'logging graph saw seen', word: 'seen' }));
  });

  it("LANGGRAPH_CONFIG of the file's env: the graph's default configurable and context reach a run; the run's own win", async () => {
    expect(await client.runs.wait(null, 'defaults', { input: {} })).toEqual({ model_name: 'openai', model: 'unknown', tone: 'dry' });
    expect(await client.runs.wait(null, 'defaults', { input: {}, context: { tone: 'warm' }, config: { configurable: { model_name: 'mine' } } })).toEqual({
      model_name: 'mine',
      model: 'unknown',
      tone: 'warm',
    });
  });

  it("the graph's defaults are its system assistant's config and context", async () => {
    const [system] = await client.assistants.search({ graphId: 'defaults', metadata: { created_by: 'system' } });
    expect(system?.config).toMatchObject({ configurable: { model_name: 'openai' } });
    expect(system?.context).toMatchObject({ tone: 'dry' });
  });
});

describe('LANGGRAPH_CONFIG and SERVICE_LANGGRAPH_JSON', () => {
  it('LANGGRAPH_CONFIG of the environment wins over the file\'s env', async () => {
    process.env.LANGGRAPH_CONFIG = JSON.stringify({ defaults: { context: { model: 'anthropic' } } });
    const agents = await loadGraphAgents(CONFIG);
    expect(agents.find((agent) => agent.id === 'defaults')!.graph.defaults).toEqual({ config: {}, context: { model: 'anthropic' } });
    expect(agents.find((agent) => agent.id === 'promised')!.graph.defaults).toBeUndefined();
  });

  it('LANGGRAPH_CONFIG that is not a JSON object of objects: a one-line ConfigError naming it', async () => {
    process.env.LANGGRAPH_CONFIG = '{"defaults": 3}';
    const error = await loadGraphAgents(CONFIG).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('Invalid configuration: LANGGRAPH_CONFIG: the entry of "defaults" is not an object');
    process.env.LANGGRAPH_CONFIG = '{"defaults": ';
    await expect(loadGraphAgents(CONFIG)).rejects.toThrow(/^Invalid configuration: LANGGRAPH_CONFIG: not valid JSON: /);
  });

  it('the old LANGGRAPH_CONFIG naming the file still works for a release: it becomes SERVICE_LANGGRAPH_JSON, with a warning', async () => {
    const legacy = loadConfig({ LANGGRAPH_CONFIG: CONFIG });
    expect(legacy.SERVICE_LANGGRAPH_JSON).toBe(CONFIG);
    expect(legacy.legacyLangGraphConfig).toBe(true);
    const json = loadConfig({ LANGGRAPH_CONFIG: '{"g": {}}' });
    expect([json.SERVICE_LANGGRAPH_JSON, json.LANGGRAPH_CONFIG, json.legacyLangGraphConfig]).toEqual([undefined, '{"g": {}}', undefined]);
    expect(loadConfig({ LANGGRAPH_CONFIG: CONFIG, SERVICE_LANGGRAPH_JSON: '/elsewhere.json' }).SERVICE_LANGGRAPH_JSON).toBe('/elsewhere.json');

    // The process's LANGGRAPH_CONFIG is the path: the file's env still gives the graphs their defaults.
    process.env.LANGGRAPH_CONFIG = CONFIG;
    const kept = keptLogger();
    const agentplane = await createAgentplane({ env: { LANGGRAPH_CONFIG: CONFIG, LOG_LEVEL: 'warn' }, logger: kept.logger });
    try {
      expect(kept.lines).toContainEqual(expect.objectContaining({ level: 40, msg: expect.stringMatching(/^LANGGRAPH_CONFIG names a langgraph\.json: .*SERVICE_LANGGRAPH_JSON/) }));
      expect(agentplane.composition.agents.graph('defaults')?.graph.defaults?.context).toEqual({ model: 'unknown', tone: 'dry' });
    } finally {
      await agentplane.close();
    }
  });
});

describe('a langgraph.json whose http.app or ui is malformed: refused at start, in one line', () => {
  const write = (extra: Record<string, unknown>): string => {
    const file = join(work, `langgraph-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify({ graphs: { g: './g.ts:graph' }, ...extra }));
    return file;
  };

  it.each([
    ['a ui that is no object', { ui: './ui.tsx' }, /: "ui" is not an object of component names and file paths$/],
    ['a ui component without a file path', { ui: { cards: 42 } }, /: "ui": "cards" needs a name of 1 to 128 letters, digits, "\.", "_", ":" or "-" and a file path$/],
    ['a ui_config.shared that is no list of names', { ui: { cards: './c.tsx' }, ui_config: { shared: 'react' } }, /: "ui_config\.shared" is not an array of package names$/],
    ['an http.app that is no file:export', { http: { app: './http.mts:' } }, /: "http\.app": "\.\/http\.mts:" is not of the form "\.\/path\/file\.ts:exportName"$/],
  ])('%s', (_name, extra, message) => {
    const file = write(extra);
    const error = (() => {
      try {
        readLangGraphJson(file);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('SERVICE_LANGGRAPH_JSON');
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('http.cors and an empty ui are read, not refused; a wrong http.cors field is one line too', () => {
    const file = write({ ui: {}, http: { cors: { allow_origins: ['https://a.example'] } } });
    expect(readLangGraphJson(file).graphs).toHaveLength(1);
    expect(langgraphJsonCors(file)).toEqual({ allow_origins: ['https://a.example'] });
    expect(() => langgraphJsonCors(write({ http: { cors: { max_age: 'long' } } }))).toThrow(/^Invalid configuration: SERVICE_LANGGRAPH_JSON: .*: "http\.cors\.max_age" is not a whole number of seconds$/);
  });
});
