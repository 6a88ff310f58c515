import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { agentCaps } from '../../src/domain/fair-share.js';
import { loadGraphAgents } from '../../src/langgraph/load.js';
import { nodeNamesOf, type GraphAgent } from '../../src/runtime/agent.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { captureLogger } from '../support/chat.js';

/*
 * loadGraphAgents on real graphs (test/fixtures/langgraph/): the four kinds of export, the
 * agents they become, the `env` of langgraph.json, and each fault as its one-line ConfigError.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/langgraph/', import.meta.url));
const CONFIG = join(FIXTURES, 'langgraph.json');
const VARIABLES = ['LANGGRAPH_FIXTURE_GREETING', 'LANGGRAPH_FIXTURE_OTHER'];
const work = mkdtempSync(join(tmpdir(), 'agentplane-graphs-'));

afterEach(() => {
  for (const name of VARIABLES) delete process.env[name];
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Invokable {
  invoke(input: unknown, config?: unknown): Promise<Record<string, unknown>>;
}

const byId = (agents: GraphAgent[], id: string): GraphAgent => agents.find((agent) => agent.id === id)!;
const graphOf = async (agent: GraphAgent, config: Record<string, unknown> = {}): Promise<Invokable> => (await agent.graph.load(config)) as Invokable;

describe('the graphs of a langgraph.json', () => {
  it('become agents, in order, with their ids, descriptions, node names and the LangGraph start as entry', async () => {
    const agents = await loadGraphAgents(CONFIG);
    const listed = agents.map((a) => ({ id: a.id, description: a.description, entry: a.entry, nodes: a.nodeNames }));
    expect(listed).toEqual([
      { id: 'echo', description: 'LangGraph graph ./compiled.ts:graph', entry: '__start__', nodes: ['greet', 'sign'] },
      { id: 'greeter', description: 'LangGraph graph ./compiled.ts:graph', entry: '__start__', nodes: ['greet', 'sign'] },
      { id: 'counter', description: 'LangGraph graph ./state-graph.mts:builder', entry: '__start__', nodes: ['increment', 'double'] },
      { id: 'shouter', description: 'LangGraph graph ./factory.js:make', entry: '__start__', nodes: ['shout'] },
      { id: 'planner', description: 'Plans an answer.', entry: '__start__', nodes: ['think', 'answer'] },
    ]);
    expect(agents.map((a) => a.graph && { kind: a.graph.kind, graphId: a.graph.graphId, spec: a.graph.spec })).toEqual([
      { kind: 'langgraph', graphId: 'echo', spec: './compiled.ts:graph' },
      { kind: 'langgraph', graphId: 'greeter', spec: './compiled.ts:graph' },
      { kind: 'langgraph', graphId: 'counter', spec: './state-graph.mts:builder' },
      { kind: 'langgraph', graphId: 'shouter', spec: './factory.js:make' },
      { kind: 'langgraph', graphId: 'planner', spec: './async-factory.mjs:makeGraph' },
    ]);
    // Plain data: the engine that runs them is the plug-in's, given to the composition root (src/main/graphs.ts).
    expect(agents.every((agent) => Object.isFrozen(agent) && !Object.hasOwn(agent.graph, 'createEngine'))).toBe(true);
  });

  it('leave running to the LangGraph engine: graph agents, never native ones, with only their node names', async () => {
    const agents = await loadGraphAgents(CONFIG);
    const counter = byId(agents, 'counter');
    expect(counter.kind).toBe('graph');
    expect(counter).not.toHaveProperty('nodes');
    expect(counter).not.toHaveProperty('next');
    const registry = new AgentRegistry(agents);
    expect(registry.graph('counter')).toBe(counter);
    expect(registry.native('counter')).toBeUndefined();
    expect(nodeNamesOf(counter)).toEqual(['increment', 'double']);
  });

  it('loads a compiled export as it is: the same graph for every run, one module for two graphs of one file', async () => {
    const agents = await loadGraphAgents(CONFIG);
    const graph = await graphOf(byId(agents, 'greeter'));
    expect(await graphOf(byId(agents, 'greeter'), { configurable: { thread_id: 'x' } })).toBe(graph);
    expect(await graphOf(byId(agents, 'echo'))).toBe(graph);
    expect(await graph.invoke({ name: 'Ada' })).toEqual({ name: 'Ada', greeting: 'Hi, Ada', signed: true });
  });

  it('compiles an uncompiled StateGraph once, without a checkpointer', async () => {
    const counter = byId(await loadGraphAgents(CONFIG), 'counter');
    const graph = await graphOf(counter);
    expect(await graphOf(counter)).toBe(graph);
    expect((graph as unknown as { checkpointer?: unknown }).checkpointer).toBeUndefined();
    expect(await graph.invoke({ count: 2 })).toEqual({ count: 6, steps: ['increment', 'double'] });
  });

  it('calls a sync function export with the run config for each run, its nodes as it answers for { configurable: {} }', async () => {
    const shouter = byId(await loadGraphAgents(CONFIG), 'shouter');
    expect(shouter.nodeNames).toEqual(['shout']);
    const polite = await graphOf(shouter, { configurable: { polite: true } });
    expect(await polite.invoke({ text: 'hi' })).toEqual({ text: 'hi', shouted: 'HI, THANKS' });
    const plain = await graphOf(shouter, { configurable: {} });
    expect(plain).not.toBe(polite);
    expect(await plain.invoke({ text: 'hi' })).toEqual({ text: 'hi', shouted: 'HI' });
  });

  it('awaits an async function export and compiles the StateGraph it answers', async () => {
    const planner = byId(await loadGraphAgents(CONFIG), 'planner');
    const graph = await graphOf(planner, { configurable: { user: 'ada' } });
    expect(typeof (graph as unknown as { compile?: unknown }).compile).toBe('undefined');
    expect(await graph.invoke({ question: 'the weather' })).toEqual({ question: 'the weather', plan: 'look up the weather', user: 'ada' });
  });
});

describe('env of a langgraph.json', () => {
  it('sets the variables of an env object before the graphs load', async () => {
    const agents = await loadGraphAgents(CONFIG);
    expect(process.env.LANGGRAPH_FIXTURE_GREETING).toBe('Hi');
    expect(await (await graphOf(byId(agents, 'greeter'))).invoke({ name: 'Ada' })).toMatchObject({ greeting: 'Hi, Ada' });
  });

  it('reads a .env file relative to the config; a variable already set keeps its value', async () => {
    const config = join(FIXTURES, 'env-file/langgraph.json');
    const agents = await loadGraphAgents(config);
    expect(await (await graphOf(byId(agents, 'greeter'))).invoke({ name: 'Ada' })).toMatchObject({ greeting: 'Howdy, Ada' });
    expect(process.env.LANGGRAPH_FIXTURE_OTHER).toBe('kept unless set');

    delete process.env.LANGGRAPH_FIXTURE_OTHER;
    process.env.LANGGRAPH_FIXTURE_GREETING = 'Ahoy';
    const again = await loadGraphAgents(config);
    expect(process.env.LANGGRAPH_FIXTURE_GREETING).toBe('Ahoy');
    expect(await (await graphOf(byId(again, 'greeter'))).invoke({ name: 'Ada' })).toMatchObject({ greeting: 'Ahoy, Ada' });
  });

  it('warns in one line naming a .env file that is not there, and loads the graphs (as the templates ship .env.example)', async () => {
    const { logger, records } = captureLogger();
    const config = graphsAt({ g: fixture('compiled.ts:graph') }, { env: './missing.env' });
    const agents = await loadGraphAgents(config, { logger });
    expect(agents.map((agent) => agent.id)).toEqual(['g']);
    const warnings = records.filter((record) => record.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toBe(`${config}: "env" names ${join(work, 'missing.env')}, which does not exist; going on without it`);
  });
});

/** Writes a langgraph.json of `content` (an object is written as JSON) in a folder of its own beside nothing; returns its path. */
let configs = 0;
function writeConfig(content: unknown): string {
  configs += 1;
  const path = join(work, `config-${configs}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const graphsAt = (graphs: Record<string, unknown>, extra: Record<string, unknown> = {}) => writeConfig({ graphs, ...extra });
const fixture = (spec: string) => `${FIXTURES}${spec}`;

describe('a graph’s cap of runs at once', () => {
  it('comes from the agentplane extension of its entry, and is laid under SERVICE_AGENT_MAX_RUNNING', async () => {
    const config = graphsAt({ capped: { path: fixture('compiled.ts:graph'), agentplane: { max_concurrency: 2 } }, free: fixture('compiled.ts:graph') });
    const agents = await loadGraphAgents(config);
    expect(agents.map((agent) => [agent.id, agent.maxConcurrency])).toEqual([
      ['capped', 2],
      ['free', undefined],
    ]);
    expect(agentCaps(agents)).toEqual({ capped: 2 });
    expect(agentCaps(agents, { capped: 5 })).toEqual({ capped: 5 });
  });
});

describe('a langgraph.json that cannot be used: a one-line ConfigError of SERVICE_LANGGRAPH_JSON naming the file and the fault', () => {
  const CASES: [string, () => string, RegExp][] = [
    ['no file', () => join(work, 'nowhere/langgraph.json'), /^Invalid configuration: SERVICE_LANGGRAPH_JSON: no file at .*nowhere\/langgraph\.json$/],
    ['bad JSON', () => writeConfig('{ "graphs": {'), /SERVICE_LANGGRAPH_JSON: .*config-\d+\.json: not valid JSON: /],
    ['no graphs', () => writeConfig({ dependencies: ['.'] }), /config-\d+\.json: no "graphs" object: write \{ "graphs": \{ "<id>": "\.\/file\.ts:exportName" \} \}$/],
    ['graphs not an object', () => writeConfig({ graphs: ['./a.ts:graph'] }), /no "graphs" object/],
    ['an invalid id', () => graphsAt({ 'my graph': fixture('compiled.ts:graph') }), /the graph id "my graph" is not a valid id/],
    ['a spec without an export', () => graphsAt({ g: './compiled.ts' }), /graph "g": "\.\/compiled\.ts" is not of the form "\.\/path\/file\.ts:exportName"$/],
    ['a spec with an empty export', () => graphsAt({ g: './compiled.ts:' }), /graph "g": "\.\/compiled\.ts:" is not of the form/],
    ['a spec that is no string', () => graphsAt({ g: 42 }), /graph "g": 42 is not of the form/],
    ['an object without a path', () => graphsAt({ g: { description: 'x' } }), /graph "g": null is not of the form/],
    ['a missing graph file', () => graphsAt({ g: './missing.ts:graph' }), /graph "g" \(\.\/missing\.ts:graph\): no file at .*\/missing\.ts$/],
    ['a missing export', () => graphsAt({ g: fixture('compiled.ts:graf') }), /graph "g" \(.*compiled\.ts:graf\): .*compiled\.ts has no export "graf" \(its exports: graph\)$/],
    ['an export that is not a graph', () => graphsAt({ g: fixture('broken.ts:answer') }), /graph "g" \(.*broken\.ts:answer\): the export is not a graph: export a compiled graph, a StateGraph, or a function that returns one$/],
    ['a StateGraph that does not compile', () => graphsAt({ g: fixture('broken.ts:noEntry') }), /graph "g" \(.*broken\.ts:noEntry\): the StateGraph does not compile: .+/],
    ['a function that answers no graph', () => graphsAt({ g: fixture('broken.ts:notGraphFactory') }), /: what the function returns is not a graph: /],
    ['a function that throws', () => graphsAt({ g: fixture('broken.ts:throwing') }), /graph "g" \(.*broken\.ts:throwing\): throwing\(\{ configurable: \{\} \}\) threw: no key for the model$/],
    ['a module that throws', () => graphsAt({ g: fixture('throws.ts:graph') }), /graph "g" \(.*throws\.ts:graph\): .*throws\.ts threw while loading: Error: the graph module failed to load/],
    ['an env value that is not a string', () => graphsAt({}, { env: { PORT: 8080 } }), /"env": the value of PORT is not a string$/],
    ['an env of another type', () => graphsAt({}, { env: ['A=1'] }), /"env" is neither the path of a \.env file nor an object of strings$/],
  ];

  it.each(CASES)('%s', async (_name, config, pattern) => {
    const error = await loadGraphAgents(config()).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('SERVICE_LANGGRAPH_JSON');
    expect(error!.message).not.toContain('\n');
    expect(error!.message).toMatch(pattern);
  });

  it('checks the whole file before it sets a variable of its env', async () => {
    const config = graphsAt({ g: fixture('compiled.ts:graph'), h: './compiled.ts' }, { env: { LANGGRAPH_FIXTURE_GREETING: 'set' } });
    await expect(loadGraphAgents(config)).rejects.toThrow(/graph "h": "\.\/compiled\.ts" is not of the form/);
    expect(process.env.LANGGRAPH_FIXTURE_GREETING).toBeUndefined();
  });

  it('resolves graph paths against the folder of the file, not the working directory', async () => {
    const config = graphsAt({ g: './compiled.ts:graph' });
    await expect(loadGraphAgents(config)).rejects.toThrow(`no file at ${join(work, 'compiled.ts')}`);
  });
});
