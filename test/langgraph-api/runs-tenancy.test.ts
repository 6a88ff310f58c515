import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { graphAgent } from '../support/langgraph.js';
import { sdkFailure, startSecuredTenants, tenantKeys, type SecuredTenants } from '../support/langgraph-sdk.js';

/*
 * Tenancy and roles of the LangGraph runs and crons through the SDK, with API keys on: every
 * run call of tenant B on tenant A's thread or run is 404 (indistinguishable from a missing
 * one), and a viewer key of A cannot start runs or crons (403), while it can read them.
 */

const KEYS = tenantKeys('runs');

const Steps = Annotation.Root({ items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
const steps = new StateGraph(Steps)
  .addNode('first', () => ({ items: ['first'] }))
  .addEdge(START, 'first')
  .addEdge('first', END)
  .compile();

describe.each(['memory', 'redis'] as const)('LangGraph SDK: runs tenancy and roles on %s', (backend) => {
  let tenants: SecuredTenants | undefined;
  let a: Client;
  let aViewer: Client;
  let b: Client;

  beforeAll(async () => {
    tenants = await startSecuredTenants(backend, { keys: KEYS, agents: new AgentRegistry([graphAgent('lg-steps', steps, ['first'])]) });
    ({ a, aViewer, b } = tenants);
  });
  afterAll(async () => {
    await tenants?.close();
  });

  it("tenant B gets 404 for every run call on tenant A's thread and run; A's run is untouched", async () => {
    const thread = await a.threads.create();
    const values = await a.runs.wait(thread.thread_id, 'lg-steps', { input: { items: ['a'] } });
    expect(values).toEqual({ items: ['a', 'first'] });
    const [run] = await a.runs.list(thread.thread_id);
    const id = thread.thread_id;
    const drain = async (stream: AsyncIterable<unknown>) => {
      for await (const _chunk of stream);
    };
    const calls: [string, () => Promise<unknown>][] = [
      ['create', () => b.runs.create(id, 'lg-steps', { input: {} })],
      ['wait', () => b.runs.wait(id, 'lg-steps', { input: {} })],
      ['stream', () => drain(b.runs.stream(id, 'lg-steps', { input: {} }))],
      ['list', () => b.runs.list(id)],
      ['get', () => b.runs.get(id, run!.run_id)],
      ['join', () => b.runs.join(id, run!.run_id)],
      ['joinStream', () => drain(b.runs.joinStream(id, run!.run_id))],
      ['cancel', () => b.runs.cancel(id, run!.run_id)],
      ['delete', () => b.runs.delete(id, run!.run_id)],
      ['cron on the thread', () => b.crons.createForThread(id, 'lg-steps', { schedule: '0 9 * * *' })],
    ];
    for (const [name, attempt] of calls) expect((await sdkFailure(attempt)).status, name).toBe(404);
    // Nothing of A's changed: its run is still there and the state is as it was.
    expect((await a.runs.get(id, run!.run_id)).status).toBe('success');
    expect((await a.threads.getState(id)).values).toEqual({ items: ['a', 'first'] });
    expect((await a.runs.list(id)).length).toBe(1);
  });

  it('a viewer key reads runs but cannot start one or a cron (403, nothing started)', async () => {
    const thread = await a.threads.create();
    await a.runs.wait(thread.thread_id, 'lg-steps', { input: {} });
    const starts: [string, () => Promise<unknown>][] = [
      ['create', () => aViewer.runs.create(thread.thread_id, 'lg-steps', { input: {} })],
      ['wait', () => aViewer.runs.wait(thread.thread_id, 'lg-steps', { input: {} })],
      ['stateless wait', () => aViewer.runs.wait(null, 'lg-steps', { input: {} })],
      ['cron', () => aViewer.crons.create('lg-steps', { schedule: '0 9 * * *' })],
    ];
    for (const [name, attempt] of starts) {
      const refused = await sdkFailure(attempt);
      expect(refused.status, name).toBe(403);
      expect(refused.body.detail, name).toBe('This operation needs the user role.');
    }
    expect((await aViewer.runs.list(thread.thread_id)).length).toBe(1);
    expect((await a.runs.list(thread.thread_id)).length).toBe(1);
  });
});
