import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { graphAgent } from '../support/langgraph.js';
import type { TestApi } from '../support/app.js';
import { sdkFailure, startSecuredTenants, tenantKeys, type SecuredTenants } from '../support/langgraph-sdk.js';
import { waitFor } from '../support/wait.js';

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

/** Held runs: each waits at a gate until the test opens it, or its run is cancelled. */
const held = { waiting: 0, open: [] as (() => void)[] };
const gated = new StateGraph(Steps)
  .addNode('hold', async (_state, config) => {
    held.waiting += 1;
    await new Promise<void>((resolve, reject) => {
      held.open.push(resolve);
      config.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
    return { items: ['held'] };
  })
  .addEdge(START, 'hold')
  .addEdge('hold', END)
  .compile();

describe.each(['memory', 'redis'] as const)('LangGraph SDK: runs tenancy and roles on %s', (backend) => {
  let tenants: SecuredTenants | undefined;
  let app: TestApi;
  let a: Client;
  let aViewer: Client;
  let b: Client;

  beforeAll(async () => {
    tenants = await startSecuredTenants(backend, {
      keys: KEYS,
      agents: new AgentRegistry([graphAgent('lg-steps', steps, ['first']), graphAgent('lg-held', gated, ['hold'])]),
    });
    ({ a, aViewer, b, app } = tenants);
  });
  afterAll(async () => {
    for (const open of held.open.splice(0)) open();
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

  it('cancel_on_disconnect on a join needs the user role: a viewer gets 403 and leaving cancels nothing; a user leaving cancels', async () => {
    const thread = (await a.threads.create()).thread_id;
    const before = held.waiting;
    const run = await a.runs.create(thread, 'lg-held', { input: {} });
    await waitFor('the run held at its gate', () => held.waiting > before);
    /** Joins the stream, takes its first frame, then hangs up. */
    const firstFrameThenLeave = async (client: Client, cancelOnDisconnect: boolean) => {
      const leave = new AbortController();
      try {
        for await (const part of client.runs.joinStream(thread, run.run_id, { cancelOnDisconnect, signal: leave.signal })) return part;
      } finally {
        leave.abort();
      }
    };
    /** GET …/join: its status and error once the headers came (a held join's 200 comes with its first keep-alive), then hangs up. */
    const joinThenLeave = async (key: string, cancelOnDisconnect: boolean) => {
      const leave = new AbortController();
      const url = `${app.url}/threads/${thread}/runs/${run.run_id}/join?cancel_on_disconnect=${cancelOnDisconnect}`;
      const response = await fetch(url, { headers: { 'X-Api-Key': key }, signal: leave.signal });
      const answer = { status: response.status, body: response.status === 200 ? null : await response.json() };
      leave.abort();
      return answer;
    };

    const refusedJoin = await joinThenLeave(KEYS.aViewer, true);
    const refusedStream = await sdkFailure(() => firstFrameThenLeave(aViewer, true));
    for (const refused of [refusedJoin, refusedStream]) {
      expect(refused).toMatchObject({ status: 403, body: { error: { code: 'forbidden' }, detail: expect.stringMatching(/^cancel_on_disconnect .*needs the user role/) } });
    }
    expect((await a.runs.get(thread, run.run_id)).status).toBe('running');
    // The viewer may follow it without cancelling, and its cancel is 403 as before.
    expect(await firstFrameThenLeave(aViewer, false)).toMatchObject({ event: 'metadata' });
    expect((await sdkFailure(aViewer.runs.cancel(thread, run.run_id))).status).toBe(403);
    expect((await a.runs.get(thread, run.run_id)).status).toBe('running');
    // The user's key: leaving cancels the run.
    expect(await firstFrameThenLeave(a, true)).toMatchObject({ event: 'metadata' });
    await waitFor('the run cancelled by its user leaving', async () => (await a.runs.get(thread, run.run_id)).status === 'interrupted');
  });
});
