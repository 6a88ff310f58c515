import { Annotation, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent, Span } from '../../src/domain/types.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call, type TestApi } from '../support/app.js';
import { expectAccessible, startConsoleApi, useConsoleHarness } from '../support/console.js';
import { graphAgent, parallelBranches } from '../support/langgraph.js';
import { eventsOf, openRaw } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

/*
 * The console in Debian's Chromium showing a LangGraph session, on the in-memory backend and on
 * Redis (this process executing runs, as a worker): a graph built here fans out to two branches
 * that run at once, their parts joined by a reducer, then asks a question with interrupt(). Each
 * screen is checked against what the API itself answers; the approval is given in the console.
 */

const TENANT = 'DefaultTenant';
const AGENT = 'lg-review';

const Review = Annotation.Root({
  topic: Annotation<string>,
  parts: Annotation<string[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
  decision: Annotation<unknown>,
});

/**
 * START → left and right at once (parallelBranches: their spans overlap strictly; parts appended
 * by the reducer) → review, which asks with interrupt({ question, parts }) and keeps the answer.
 */
function reviewGraph(announced: (runId: string) => Promise<number>) {
  const branch = parallelBranches(announced);
  return new StateGraph(Review)
    .addNode('left', branch('left'))
    .addNode('right', branch('right'))
    .addNode('review', (state) => ({ decision: interrupt({ question: `Publish ${state.parts.join(' + ')}?`, parts: state.parts }) }))
    .addEdge(START, 'left')
    .addEdge(START, 'right')
    .addEdge(['left', 'right'], 'review')
    .addEdge('review', END)
    .compile();
}

const harness = useConsoleHarness();

describe.each(['memory', 'redis'] as const)('the console with a LangGraph session on %s', (mode) => {
  let api: TestApi;

  beforeAll(async () => {
    const announced = async (runId: string) =>
      (await api.backend.events.readAfter(TENANT, '0-0', 10_000)).filter((e) => e.event.run_id === runId && e.event.type === 'node_start').length;
    const agents = new AgentRegistry([graphAgent(AGENT, () => reviewGraph(announced), ['left', 'right', 'review'])]);
    api = await startConsoleApi(harness.redisUrl(mode), { agents });
  });
  afterAll(async () => {
    await api?.close();
  });

  /** A new tab on a screen of the console; fails the test if the page throws or logs an error. */
  const open = (hash: string, allowed: RegExp[] = []): Promise<Page> => harness.open(`${api.url}/console/${hash}`, allowed);

  /** The session's events as the API replays them, up to the first `until`. */
  async function serverEvents(sessionId: string, until: RunEvent['type']): Promise<{ id: string; type: string; node: string }[]> {
    const stream = await openRaw(`${api.url}/api/events/stream?session=${sessionId}`, { 'Last-Event-ID': '0-0' });
    try {
      await stream.waitForFrames((frames) => eventsOf(frames).some((r) => r.event.type === until), `the ${until} event of session ${sessionId}`);
      const received = eventsOf(stream.frames);
      return received.slice(0, received.findIndex((r) => r.event.type === until) + 1).map((r) => ({ id: r.id, type: r.event.type, node: r.event.node ?? '' }));
    } finally {
      stream.destroy();
    }
  }

  /** What the session page's feed shows: each event's id, type, node and detail. */
  const feedOf = (page: Page) =>
    page.$$eval('.feed li', (items) =>
      items.map((li) => ({
        id: li.getAttribute('data-id') ?? '',
        type: li.getAttribute('data-type') ?? '',
        node: li.querySelector('code')?.textContent ?? '',
        detail: li.querySelector('.event-detail')?.textContent ?? '',
      })),
    );

  /** The checkpoint timeline as shown: each checkpoint's seq and next node(s), newest first. */
  const timelineOf = (page: Page) =>
    page.$$eval('.timeline li', (items) => items.map((li) => ({ seq: Number(li.getAttribute('data-seq')), node_id: li.querySelector('h3 code')?.textContent ?? '' })));

  it('shows the session, its state, events, parallel spans and the question in the inbox; approving in the console completes the run', async () => {
    const sessionId = `lg-console-${mode}`;
    const started = await call(`${api.url}/api/runs`, { method: 'POST', json: { agent_id: AGENT, input: { topic: 'tea' }, session_id: sessionId } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const runId: string = started.body.run_id ?? started.body.id;
    const paused = await waitFor(`run ${runId} interrupted`, async () => {
      const { body } = await call(`${api.url}/api/runs/${runId}`);
      return body?.status === 'interrupted' && body;
    });

    // The sessions list: the session with its graph agent and its run's status.
    const page = await open('#/sessions');
    const row = page.locator(`tr[data-session="${sessionId}"]`);
    await row.locator('[data-testid=run-status]', { hasText: 'interrupted' }).waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe(AGENT);
    await expectAccessible(page, 'the sessions list with a LangGraph session');

    // The session page: the graph's values and the node it waits in.
    await row.getByRole('link', { name: sessionId }).click();
    await page.getByRole('heading', { name: `Session ${sessionId}`, level: 1 }).waitFor();
    const state = (await call(`${api.url}/api/sessions/state?session_id=${sessionId}`)).body;
    expect(state).toMatchObject({ node_id: 'review', state: { topic: 'tea', parts: ['left:tea', 'right:tea'] } });
    await page.locator('[data-testid=checkpoint-seq]', { hasText: new RegExp(`^${state.seq_num}$`) }).waitFor();
    await page.locator('[data-testid=latest-status]', { hasText: 'interrupted' }).waitFor();
    const facts = await page.$$eval('dl.facts dt', (terms) => Object.fromEntries(terms.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
    expect(facts).toMatchObject({ Agent: AGENT, 'Latest run': 'interrupted', 'Next node': 'review' });
    expect(JSON.parse((await page.getByLabel('Current state of the session').textContent()) ?? '')).toEqual(state.state);

    // The checkpoint timeline: LangGraph's checkpoints with their next nodes, both branches planned at once.
    const history = (await call(`${api.url}/api/sessions/history?session_id=${sessionId}`)).body.checkpoints as { seq_num: number; node_id: string }[];
    await page.locator(`.timeline li[data-seq="${state.seq_num}"]`).waitFor();
    expect(await timelineOf(page)).toEqual(history.map((c) => ({ seq: c.seq_num, node_id: c.node_id })));
    expect(history.map((c) => c.node_id)).toEqual(['review', 'left,right', '__start__']);

    // The feed: the session's events as the API streams them, each branch started and ended.
    await page.locator('.feed li[data-type=interrupted]').waitFor();
    const feed = await feedOf(page);
    expect(feed.map(({ id, type, node }) => ({ id, type, node }))).toEqual(await serverEvents(sessionId, 'interrupted'));
    const branches = feed.filter((e) => e.node === 'left' || e.node === 'right').map((e) => `${e.type}:${e.node}:${e.detail}`);
    expect(branches.slice(0, 2).sort()).toEqual(['node_start:left:', 'node_start:right:']);
    expect(branches.slice(2).sort()).toEqual(['node_end:left:ok', 'node_end:right:ok']);
    expect(feed.at(-1)).toMatchObject({ type: 'interrupted', node: 'review', detail: `approval ${paused.approval_id}` });

    // The trace: the two branches' rows, their times as the API's spans have them, their bars overlapping.
    const spans = (await call(`${api.url}/api/traces?session_id=${sessionId}`)).body.traces as Span[];
    await waitFor('the rows of every span', async () => (await page.locator('table.waterfall tbody tr').count()) === spans.length);
    const rows = await page.$$eval('table.waterfall tbody tr', (trs) =>
      trs.map((tr) => {
        const cells = tr.querySelectorAll('td');
        const bar = tr.querySelector<HTMLElement>('.bar');
        return {
          name: tr.querySelector('th')?.textContent ?? '',
          status: cells[0]?.textContent ?? '',
          starts: cells[1]?.textContent ?? '',
          duration: cells[2]?.textContent ?? '',
          left: parseFloat(bar?.style.left ?? ''),
          width: parseFloat(bar?.style.width ?? ''),
        };
      }),
    );
    const t0 = Math.min(...spans.map((s) => Date.parse(s.start)));
    const shown = (n: number) => (n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`);
    for (const name of ['left', 'right']) {
      const span = spans.find((s) => s.name === name)!;
      expect(rows.find((r) => r.name === name)).toMatchObject({
        status: 'ok',
        starts: `+${shown(Date.parse(span.start) - t0)}`,
        duration: shown(Date.parse(span.end) - Date.parse(span.start)),
      });
    }
    expect(rows.find((r) => r.name === 'review')).toMatchObject({ status: 'interrupted' });
    const [left, right] = ['left', 'right'].map((name) => rows.find((r) => r.name === name)!);
    expect(left!.left).toBeLessThan(right!.left + right!.width);
    expect(right!.left).toBeLessThan(left!.left + left!.width);
    await expectAccessible(page, 'a paused LangGraph session');

    // The inbox: the interrupt's question as the prompt, its value as the JSON payload.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Approvals/ }).click();
    const request = page.locator(`tr[data-approval="${paused.approval_id}"]`);
    await request.waitFor();
    const question = 'Publish left:tea + right:tea?';
    expect(await request.locator('td').first().textContent()).toBe(question);
    expect(await request.locator('td').nth(1).textContent()).toBe(AGENT);
    await request.getByRole('link', { name: /^Open approval/ }).click();
    const payload = page.getByLabel('Payload of the request');
    await payload.waitFor();
    expect(JSON.parse((await payload.textContent()) ?? '')).toEqual({ question, parts: ['left:tea', 'right:tea'] });
    await page.getByRole('heading', { name: question, level: 2 }).waitFor();
    await waitFor('the state in the editor', async () => (await page.getByLabel(/^Session state/).inputValue()).includes('right:tea'));
    await expectAccessible(page, 'a LangGraph approval');

    // Approving in the console resumes the graph: interrupt() returns the decision.
    await page.getByLabel(/^Comment/).fill('approved in the console');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByRole('status').filter({ hasText: /^Approved/ }).waitFor();
    await request.waitFor({ state: 'detached' });
    await page.getByRole('link', { name: `Open session ${sessionId}` }).click();
    await page.locator('[data-testid=latest-status]', { hasText: 'completed' }).waitFor();
    const done = (await call(`${api.url}/api/sessions/state?session_id=${sessionId}`)).body;
    const final = { topic: 'tea', parts: ['left:tea', 'right:tea'], decision: { approved: true, comment: 'approved in the console' } };
    expect(done).toMatchObject({ node_id: '__end__', state: final });
    await page.locator('[data-testid=checkpoint-seq]', { hasText: new RegExp(`^${done.seq_num}$`) }).waitFor();
    expect(JSON.parse((await page.getByLabel('Current state of the session').textContent()) ?? '')).toEqual(final);
    await page.locator('.feed li[data-type=completed]').waitFor();
    const after = await feedOf(page);
    expect(after.map(({ id, type, node }) => ({ id, type, node }))).toEqual(await serverEvents(sessionId, 'completed'));
    expect(after.slice(feed.length).map((e) => `${e.type}:${e.node}:${e.detail}`)).toEqual([
      expect.stringMatching(/^approval_decided::approved by /),
      'node_start:review:',
      'node_end:review:ok',
      'completed::',
    ]);
    expect((await call(`${api.url}/api/runs/${runId}`)).body.status).toBe('completed');
  }, 150_000);
});
