import { describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { startProcess } from '../support/processes.js';

/*
 * SERVICE_LANGGRAPH_JSON in real processes, as `npm start` and `agentplane dev --config` run them
 * (tsx on the sources, embedded): the graphs of test/fixtures/langgraph/langgraph.json listed
 * by GET /api/agents beside the built-in agents, and a clash with AGENTS_MODULE refused at start.
 */

const CONFIG = 'test/fixtures/langgraph/langgraph.json';

interface Listed {
  agents: { id: string; description: string; nodes: string[]; entry: string }[];
}

/** The built-ins but `echo` (the fixture's `echo` graph takes its place), then the graphs in the file's order. */
const EXPECTED = [
  { id: 'human-review', description: expect.any(String), nodes: ['draft', 'review', 'publish', 'discard'], entry: 'draft' },
  { id: 'stream-words', description: expect.any(String), nodes: ['speak'], entry: 'speak' },
  { id: 'echo', description: 'LangGraph graph ./compiled.ts:graph', nodes: ['greet', 'sign'], entry: '__start__' },
  { id: 'greeter', description: 'LangGraph graph ./compiled.ts:graph', nodes: ['greet', 'sign'], entry: '__start__' },
  { id: 'counter', description: 'LangGraph graph ./state-graph.mts:builder', nodes: ['increment', 'double'], entry: '__start__' },
  { id: 'shouter', description: 'LangGraph graph ./factory.js:make', nodes: ['shout'], entry: '__start__' },
  { id: 'planner', description: 'Plans an answer.', nodes: ['think', 'answer'], entry: '__start__' },
];

describe('graphs of SERVICE_LANGGRAPH_JSON in a process', () => {
  it.each([
    ['npm start with SERVICE_LANGGRAPH_JSON', { entry: 'src/main/api.ts', env: { SERVICE_LANGGRAPH_JSON: CONFIG } }],
    ['agentplane dev --config', { entry: 'src/cli/main.ts', args: ['dev', '--config', CONFIG], env: {} }],
  ] as const)('%s: GET /api/agents lists them with their nodes beside the built-in agents', async (_name, runner) => {
    const api = await startProcess({ ...runner, env: { ...runner.env, REDIS_URL: undefined, LOG_LEVEL: 'warn' }, readyTimeoutMs: 150_000 });
    try {
      const listed = await call(`${api.url}/api/agents`);
      expect(listed.status).toBe(200);
      expect((listed.body as Listed).agents).toEqual(EXPECTED);
    } finally {
      expect(await api.stop()).toBe(0);
    }
  }, 240_000);

  it('stops at start with one line naming both when a graph has the id of an agent of AGENTS_MODULE', async () => {
    const proc = await startProcess({
      entry: 'src/main/api.ts',
      env: { REDIS_URL: undefined, SERVICE_LANGGRAPH_JSON: CONFIG, AGENTS_MODULE: 'examples/agents/index.js' },
      ready: 'spawned',
    });
    expect(await proc.exited).toBe(1);
    const errors = proc.lines.filter((l) => l.stream === 'stderr' && l.text.trim() !== '').map((l) => l.text);
    expect(errors).toEqual([
      'Invalid configuration: SERVICE_LANGGRAPH_JSON: the graph "greeter" (./compiled.ts:graph) has the id of an agent of AGENTS_MODULE (examples/agents/index.js); rename one of them',
    ]);
  }, 240_000);
});
