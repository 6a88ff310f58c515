import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../support/build.js';
import { startProcess } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

/*
 * LangGraph.js versions as users install them: the packed agentplane in a project of its own
 * with the oldest LangGraph.js it supports (1.0.0, with the oldest checkpoint package it runs,
 * 1.2.2) and with the newest (the repository's own, package.json's devDependencies), where a
 * graph's run ends with the graph's state, and a graph of parallel tasks (Send) and an interrupt
 * answered through its approval completes with both; and in projects of LangGraph.js 0.2 and
 * 0.4 templates (with @langchain/core 0.3, installed beside it as npm allows with
 * --legacy-peer-deps), which the API refuses at start in one line naming the installed version
 * and the supported range, exit code 1, no stack. A TypeScript graph's schemas come from its
 * types where the project has `typescript` (the newest project), from its channel names where
 * it does not (the oldest).
 */

const work = mkdtempSync(join(tmpdir(), 'agentplane-lgversions-'));

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr: error && code === -1 ? `${stderr}\n${error.message}` : stderr });
    });
  });
}

async function succeed(command: string, args: readonly string[], cwd: string, timeoutMs = 300_000): Promise<string> {
  const result = await run(command, args, cwd, timeoutMs);
  expect(result.code, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** A plain-JavaScript graph: two nodes and a reducer, as a template's graph is written. */
const GRAPH = `import { Annotation, END, START, StateGraph } from '@langchain/langgraph';

const State = Annotation.Root({
  text: Annotation(),
  loud: Annotation(),
  steps: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});
export const graph = new StateGraph(State)
  .addNode('shout', (state) => ({ loud: String(state.text).toUpperCase(), steps: ['shout'] }))
  .addNode('sign', (state) => ({ loud: \`\${state.loud}!\`, steps: ['sign'] }))
  .addEdge(START, 'shout')
  .addEdge('shout', 'sign')
  .addEdge('sign', END)
  .compile();
`;

/** Parallel tasks (Send) then an interrupt, answered through an approval: the saver's pending writes and resume. */
const ASKER = `import { Annotation, END, START, Send, StateGraph, interrupt } from '@langchain/langgraph';

const State = Annotation.Root({
  items: Annotation(),
  done: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  choice: Annotation(),
});
export const graph = new StateGraph(State)
  .addNode('work', (task) => ({ done: [String(task.item).toUpperCase()] }))
  .addNode('ask', () => ({ choice: interrupt({ question: 'Pick a city' }) }))
  .addConditionalEdges(START, (state) => state.items.map((item) => new Send('work', { item })))
  .addEdge('work', 'ask')
  .addEdge('ask', END)
  .compile();
`;

/** A TypeScript graph whose state types live in TypeScript only: its schemas come from them (read by the compiled reader in a child process). */
const TYPED = `import { Annotation, END, START, StateGraph } from '@langchain/langgraph';

const State = Annotation.Root({ mood: Annotation<'calm' | 'loud'>, count: Annotation<number> });
export const graph = new StateGraph(State)
  .addNode('tally', (state) => ({ count: (state.count ?? 0) + 1 }))
  .addEdge(START, 'tally')
  .addEdge('tally', END)
  .compile();
`;

/** A package's version in this repository's node_modules (package.json's devDependencies: the newest 1.x). */
const repoVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** The projects: name → the LangGraph.js packages installed beside agentplane. */
const PROJECTS = {
  oldest: { packages: ['@langchain/langgraph@1.0.0', '@langchain/langgraph-checkpoint@1.2.2', '@langchain/core@1.4.0'], legacyPeers: false },
  newest: {
    packages: ['@langchain/langgraph', '@langchain/langgraph-checkpoint', '@langchain/core', 'typescript'].map((name) => `${name}@${repoVersion(name)}`),
    legacyPeers: false,
  },
  // LangGraph.js 0.x templates: @langchain/core 0.3, which agentplane's peer range refuses unless npm is told to ignore peers.
  'langgraph-0.2': { packages: ['@langchain/langgraph@0.2.74', '@langchain/core@0.3.80'], legacyPeers: true },
  'langgraph-0.4': { packages: ['@langchain/langgraph@0.4.10', '@langchain/core@0.3.80'], legacyPeers: true },
} as const;

type Project = keyof typeof PROJECTS;

const projectDir = (name: Project): string => join(work, name);

const installedVersion = (name: Project, pkg: string): string =>
  (JSON.parse(readFileSync(join(projectDir(name), 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

beforeAll(async () => {
  await ensureBuilt();
  const packed = JSON.parse(await succeed('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], ROOT)) as { filename: string }[];
  const tarball = join(work, packed[0]!.filename);
  await Promise.all(
    Object.entries(PROJECTS).map(async ([name, { packages, legacyPeers }]) => {
      const dir = projectDir(name as Project);
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `graphs-${name}`, version: '1.0.0', private: true, type: 'module' }));
      writeFileSync(join(dir, 'graph.js'), GRAPH);
      writeFileSync(join(dir, 'asker.js'), ASKER);
      writeFileSync(join(dir, 'typed.ts'), TYPED);
      writeFileSync(join(dir, 'langgraph.json'), JSON.stringify({ graphs: { shouter: './graph.js:graph', asker: './asker.js:graph', typed: './typed.ts:graph' } }));
      const flags = ['--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', ...(legacyPeers ? ['--legacy-peer-deps'] : [])];
      await succeed('npm', ['install', tarball, ...packages, ...flags], dir);
    }),
  );
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = (name: Project) => ({ REDIS_URL: undefined, AGENTS_MODULE: undefined, SERVICE_LANGGRAPH_JSON: join(projectDir(name), 'langgraph.json'), LOG_LEVEL: 'warn' });

const SUPPORTED_CASES: [Project, string, string][] = [
  ['oldest', '1.0.0', '1.2.2'],
  ['newest', repoVersion('@langchain/langgraph'), repoVersion('@langchain/langgraph-checkpoint')],
];

describe('LangGraph.js versions, with the packed agentplane', () => {
  it.each(SUPPORTED_CASES)("runs graphs on the %s supported LangGraph.js (%s, checkpoint %s): a run ends with the graph's state; Send and interrupt() resume", async (name, langgraph, checkpoint) => {
    expect(installedVersion(name, '@langchain/langgraph')).toBe(langgraph);
    expect(installedVersion(name, '@langchain/langgraph-checkpoint')).toBe(checkpoint);
    const api = await startProcess({ cwd: projectDir(name), plainNode: true, entry: 'node_modules/@agentplane/server/dist/src/main/api.js', env: env(name), readyTimeoutMs: 90_000 });
    try {
      const agents = (await (await fetch(`${api.url}/api/agents`)).json()) as { agents: { id: string; nodes: string[] }[] };
      expect(agents.agents.find((agent) => agent.id === 'shouter')).toMatchObject({ nodes: ['shout', 'sign'] });
      const waited = await fetch(`${api.url}/api/runs/wait`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_id: 'shouter', input: { text: name } }),
      });
      const loud = `${name.toUpperCase()}!`;
      const run = (await waited.json()) as { status: string; session_id: string; state: Record<string, unknown> };
      expect(run).toMatchObject({ status: 'completed', state: { text: name, loud, steps: ['shout', 'sign'] } });
      // The state is the saver's, read back from the thread's checkpoint.
      const state = await fetch(`${api.url}/api/sessions/state?session_id=${run.session_id}`);
      expect(await state.json()).toMatchObject({ state: { loud, steps: ['shout', 'sign'] } });
      // Send and interrupt(): the run stops at the approval with both tasks' writes, and goes on once it is answered.
      const post = async (path: string, body: unknown) =>
        (await fetch(`${api.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
      const asked = await post('/api/runs/wait', { agent_id: 'asker', input: { items: ['a', 'b'] } });
      expect(asked).toMatchObject({ status: 'interrupted', state: { done: ['A', 'B'] }, approval: { node_id: 'ask', payload: { question: 'Pick a city' } } });
      expect(await post('/api/approval/respond', { id: asked.approval.id, resume: 'Paris' })).toMatchObject({ status: 'approved' });
      await waitFor('the answered run to complete', async () => ((await (await fetch(`${api.url}/api/runs/${asked.id}`)).json()) as { status: string }).status === 'completed', 20_000);
      const after = await fetch(`${api.url}/api/sessions/state?session_id=${asked.session_id}`);
      expect(await after.json()).toMatchObject({ state: { items: ['a', 'b'], done: ['A', 'B'], choice: 'Paris' } });
    } finally {
      await api.stop();
    }
  }, 180_000);

  it("gives a TypeScript graph's schemas from its types with the project's typescript, and its channel names without one", async () => {
    for (const name of ['newest', 'oldest'] as const) {
      const api = await startProcess({ cwd: projectDir(name), plainNode: true, entry: 'node_modules/@agentplane/server/dist/src/main/api.js', env: env(name), readyTimeoutMs: 90_000 });
      try {
        const schemas = (await (await fetch(`${api.url}/assistants/typed/schemas`)).json()) as { state_schema: unknown };
        expect(schemas.state_schema, name).toEqual(
          name === 'newest'
            ? { type: 'object', properties: { mood: { type: 'string', enum: ['calm', 'loud'] }, count: { type: 'number' } }, required: ['mood', 'count'], $schema: 'http://json-schema.org/draft-07/schema#' }
            : { type: 'object', properties: { mood: {}, count: {} } },
        );
      } finally {
        await api.stop();
      }
    }
  }, 180_000);

  it.each([
    ['langgraph-0.2', '0.2.74'],
    ['langgraph-0.4', '0.4.10'],
  ] as [Project, string][])('refuses %s (%s) at start in one line naming the installed version and the supported range: exit code 1, no stack', async (name, version) => {
    expect(installedVersion(name, '@langchain/langgraph')).toBe(version);
    const api = await startProcess({ cwd: projectDir(name), plainNode: true, entry: 'node_modules/@agentplane/server/dist/src/main/api.js', env: env(name), ready: 'spawned' });
    expect(await api.exited).toBe(1);
    const installed = join(projectDir(name), 'node_modules/@langchain/langgraph');
    expect(api.lines.filter((line) => line.text.trim() !== '').map((line) => line.text)).toEqual([
      `Invalid configuration: SERVICE_LANGGRAPH_JSON: @langchain/langgraph ${version} (${installed}, the copy the graphs import) is not supported: ` +
        'agentplane runs @langchain/langgraph ^1.0.0 with @langchain/langgraph-checkpoint ^1.2.2 and @langchain/core ^1.4.0; npm install @langchain/langgraph@^1 @langchain/core@^1',
    ]);
  }, 90_000);
});
