import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { loadGraphAgents } from '../../src/langgraph/load.js';
import { call } from '../support/app.js';
import { startProcess } from '../support/processes.js';

/*
 * Mistakes a newcomer to agentplane makes with SERVICE_LANGGRAPH_JSON and AGENTS_MODULE,
 * answered in one line that says what to do: the project's folder instead of its
 * langgraph.json, and a Python graph, named in langgraph.json or as the agents module.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/langgraph/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'agentplane-mistakes-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const EMBEDDED = { REDIS_URL: undefined, AGENTS_MODULE: undefined };

describe('SERVICE_LANGGRAPH_JSON naming a folder', () => {
  it('with a langgraph.json in it: that file is served (GET /api/agents lists its graphs)', async () => {
    expect(loadConfig({ SERVICE_LANGGRAPH_JSON: FIXTURES }).SERVICE_LANGGRAPH_JSON).toBe(join(FIXTURES, 'langgraph.json'));
    const proc = await startProcess({ entry: 'src/main/api.ts', env: { ...EMBEDDED, SERVICE_LANGGRAPH_JSON: FIXTURES } });
    try {
      const agents = await call(`${proc.url}/api/agents`);
      expect(agents.status).toBe(200);
      expect(JSON.stringify(agents.body)).toContain('"planner"');
    } finally {
      await proc.stop();
    }
  });

  it('without one: the start fails in one line naming the setting and the file to name, no EISDIR', async () => {
    const folder = join(work, 'my-project');
    mkdirSync(folder);
    const proc = await startProcess({ entry: 'src/main/api.ts', env: { ...EMBEDDED, SERVICE_LANGGRAPH_JSON: folder }, ready: 'spawned' });
    expect(await proc.exited).toBe(1);
    const errors = proc.lines.filter((l) => l.stream === 'stderr' && l.text.trim() !== '').map((l) => l.text);
    expect(errors).toEqual([
      `Invalid configuration: SERVICE_LANGGRAPH_JSON: ${folder} is a folder with no langgraph.json in it: set SERVICE_LANGGRAPH_JSON to the project's langgraph.json (e.g. ${join(folder, 'langgraph.json')})`,
    ]);
  });
});

describe('a Python graph in langgraph.json', () => {
  it('is named with its file: only LangGraph.js graphs are served, Python ones need LangGraph’s Python server', async () => {
    const path = join(work, 'langgraph.json');
    writeFileSync(join(work, 'agent.py'), 'graph = None\n');
    writeFileSync(path, JSON.stringify({ graphs: { agent: './agent.py:graph' } }));
    const error = await loadGraphAgents(path).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.message).toBe(
      `Invalid configuration: SERVICE_LANGGRAPH_JSON: ${path}: graph "agent" (./agent.py:graph) is a Python graph (${join(work, 'agent.py')}): ` +
        "agentplane serves LangGraph.js graphs only (a .ts, .mts, .js or .mjs file); serve Python graphs with LangGraph's Python server (langgraph dev)",
    );
  });
});

describe('a Python file as AGENTS_MODULE', () => {
  it('stops the start in one line: only JavaScript and TypeScript agents and LangGraph.js graphs are served, not Python', async () => {
    const file = join(work, 'python-agent', 'agent.py');
    mkdirSync(join(work, 'python-agent'));
    writeFileSync(file, 'graph = None\n');
    const proc = await startProcess({ entry: 'src/main/api.ts', env: { ...EMBEDDED, AGENTS_MODULE: file }, ready: 'spawned' });
    expect(await proc.exited).toBe(1);
    const errors = proc.lines.filter((l) => l.stream === 'stderr' && l.text.trim() !== '').map((l) => l.text);
    expect(errors).toEqual([
      `Invalid configuration: AGENTS_MODULE: ${file} is a Python file: agentplane serves agents written in JavaScript or TypeScript ` +
        "(a .js, .mjs or .ts module of defineAgent agents) and LangGraph.js graphs (SERVICE_LANGGRAPH_JSON), not Python; serve Python graphs with LangGraph's Python server (langgraph dev)",
    ]);
  });
});
