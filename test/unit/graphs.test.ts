import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtInAgents } from '../../src/agents/index.js';
import { ConfigError } from '../../src/config.js';
import type { GraphAgent } from '../../src/runtime/agent.js';
import { missingLangGraph, withGraphs } from '../../src/main/graphs.js';

const work = mkdtempSync(join(tmpdir(), 'agentplane-peers-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The error plain Node gives `import(specifier)` in `dir` (a folder of its own, away from this repository's node_modules). */
function importErrorIn(dir: string, specifier: string): Promise<Error> {
  const probe = `try { await import(${JSON.stringify(specifier)}); console.log('{}'); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  writeFileSync(join(dir, 'probe.mjs'), probe);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['probe.mjs'], { cwd: dir, env: { PATH: process.env.PATH } }, (error, stdout) => {
      if (error) return reject(error);
      const { code, message } = JSON.parse(stdout) as { code?: string; message?: string };
      resolve(Object.assign(new Error(message), { code }));
    });
  });
}

describe('missingLangGraph: importing src/langgraph/ without the optional peer dependencies', () => {
  const INSTALL = 'Invalid configuration: SERVICE_LANGGRAPH_JSON: graphs need @langchain/langgraph and @langchain/core: npm install @langchain/langgraph @langchain/core';

  it('says in one line what to install when @langchain/langgraph is not there', async () => {
    const dir = join(work, 'bare');
    mkdirSync(dir);
    const error = await importErrorIn(dir, '@langchain/langgraph');
    expect((error as NodeJS.ErrnoException).code).toBe('ERR_MODULE_NOT_FOUND');
    const mapped = missingLangGraph(error);
    expect(mapped).toBeInstanceOf(ConfigError);
    expect(mapped!.message).toBe(INSTALL);
  });

  it('says the same when @langchain/langgraph is there but @langchain/core, which it imports, is not', async () => {
    const dir = join(work, 'without-core');
    const langgraph = join(dir, 'node_modules/@langchain/langgraph');
    mkdirSync(langgraph, { recursive: true });
    writeFileSync(join(langgraph, 'package.json'), JSON.stringify({ name: '@langchain/langgraph', type: 'module', exports: './index.js' }));
    writeFileSync(join(langgraph, 'index.js'), "export * from '@langchain/core/runnables';\n");
    const error = await importErrorIn(dir, '@langchain/langgraph');
    expect(error.message).toMatch(/@langchain\/core/);
    expect(missingLangGraph(error)?.message).toBe(INSTALL);
  });

  it('leaves any other error alone', async () => {
    const dir = join(work, 'other');
    mkdirSync(dir);
    expect(missingLangGraph(await importErrorIn(dir, 'no-such-package-for-agentplane'))).toBeUndefined();
    expect(missingLangGraph(new Error("Cannot find package '@langchain/langgraph'"))).toBeUndefined();
    expect(missingLangGraph(Object.assign(new SyntaxError('Unexpected token'), { code: undefined }))).toBeUndefined();
    expect(missingLangGraph(undefined)).toBeUndefined();
  });
});

/** A stand-in for a graph agent: what withGraphs reads of one is its id and its spec. */
const graphAgent = (id: string): GraphAgent =>
  Object.freeze({
    kind: 'graph' as const,
    id,
    description: `LangGraph graph ./${id}.ts:graph`,
    entry: '__start__',
    nodeNames: ['n'],
    graph: { kind: 'langgraph' as const, graphId: id, spec: `./${id}.ts:graph`, load: async () => ({}) },
  });

describe('withGraphs: the agents of a process beside its graphs', () => {
  it('puts the graphs after the agents; a graph takes the place of a built-in agent of its id', () => {
    const agents = withGraphs(builtInAgents, [graphAgent('echo'), graphAgent('chat')], undefined);
    expect(agents.map((a) => [a.id, a.kind === 'graph'])).toEqual([
      ['human-review', false],
      ['stream-words', false],
      ['echo', true],
      ['chat', true],
    ]);
  });

  it('keeps every agent when no graph shares its id', () => {
    expect(withGraphs(builtInAgents, [], undefined)).toEqual(builtInAgents);
    expect(withGraphs(builtInAgents, [graphAgent('chat')], 'AGENTS_MODULE (./agents.js)').map((a) => a.id)).toEqual(['echo', 'human-review', 'stream-words', 'chat']);
  });

  it("refuses a graph with the id of one of the process's own agents, naming both", () => {
    const call = () => withGraphs(builtInAgents, [graphAgent('chat'), graphAgent('echo')], 'AGENTS_MODULE (./agents.js)');
    expect(call).toThrow(ConfigError);
    expect(call).toThrow(
      'Invalid configuration: SERVICE_LANGGRAPH_JSON: the graph "echo" (./echo.ts:graph) has the id of an agent of AGENTS_MODULE (./agents.js); rename one of them',
    );
  });
});
