import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { agentCaps } from '../../src/domain/fair-share.js';
import { readLangGraphJson } from '../../src/langgraph/langgraph-json.js';
import { defineAgent } from '../../src/runtime/agent.js';

const agent = (maxConcurrency?: number) =>
  defineAgent({ id: 'a', description: '', entry: 'n', nodes: { n: () => ({}) }, edges: {}, ...(maxConcurrency === undefined ? {} : { maxConcurrency }) });

/** A langgraph.json holding `graphs`, in a folder removed after the test. */
function langgraphJson(graphs: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-caps-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'langgraph.json');
  writeFileSync(path, JSON.stringify({ graphs }));
  return path;
}

describe('agent caps: where they are declared and overridden', () => {
  it('reads SERVICE_AGENT_MAX_RUNNING as agent id → most runs (an id may hold ":"), unset as none', () => {
    expect(loadConfig({ SERVICE_AGENT_MAX_RUNNING: 'agentA:2, ns:agentB:5,agentC:0' }).fairShare.agents).toEqual({ agentA: 2, 'ns:agentB': 5, agentC: 0 });
    expect(loadConfig({}).fairShare.agents).toEqual({});
  });

  it.each(['agentA', 'agentA:-1', 'agentA:two', ':2', 'bad id:2'])('stops the start on SERVICE_AGENT_MAX_RUNNING=%s, naming it', (value) => {
    expect(() => loadConfig({ SERVICE_AGENT_MAX_RUNNING: value })).toThrow(/SERVICE_AGENT_MAX_RUNNING/);
  });

  it('lays the setting over the agents’ own caps, 0 lifting one', () => {
    const declared = [
      { id: 'a', maxConcurrency: 2 },
      { id: 'b', maxConcurrency: 3 },
      { id: 'c', maxConcurrency: 4 },
      { id: 'd' },
    ];
    expect(agentCaps(declared, { b: 7, c: 0, e: 1 })).toEqual({ a: 2, b: 7, e: 1 });
  });

  it('takes a positive integer maxConcurrency in defineAgent, and nothing else', () => {
    expect(agent(2).maxConcurrency).toBe(2);
    expect(agent().maxConcurrency).toBeUndefined();
    for (const bad of [0, -1, 1.5]) expect(() => agent(bad)).toThrow(/maxConcurrency must be a positive integer/);
  });

  it('reads a graph’s cap from the agentplane extension of its langgraph.json entry', () => {
    const path = langgraphJson({ capped: { path: './g.ts:graph', agentplane: { max_concurrency: 3 } }, free: './g.ts:graph' });
    expect(readLangGraphJson(path).graphs.map((g) => [g.id, g.maxConcurrency])).toEqual([
      ['capped', 3],
      ['free', undefined],
    ]);
    for (const bad of [{ max_concurrency: 0 }, { max_concurrency: '2' }, 2]) {
      expect(() => readLangGraphJson(langgraphJson({ g: { path: './g.ts:graph', agentplane: bad } }))).toThrow(/"agentplane" is not of the form/);
    }
  });
});
