import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STORAGE_LIMITS, MAX_ERROR_CHARS, type RunEvent } from '../../src/domain/types.js';
import type { EventBus } from '../../src/ports/event-bus.js';
import type { Store } from '../../src/ports/store.js';
import { call } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { brief } from '../support/events.js';

const T = 'DefaultTenant';

/** What the run scenarios need: the API's URL and the backend it shares with the executor. */
export interface RunHarness {
  url: string;
  store: Store;
  events: EventBus;
  /** Runs executed at once (WORKER_CONCURRENCY times the worker processes), when a test needs it. */
  slots?: number;
}

export async function startRun(h: RunHarness, body: Record<string, unknown>): Promise<{ run_id: string; session_id: string }> {
  return startRunAt(h.url, body);
}

async function startRunAt(url: string, body: Record<string, unknown>): Promise<{ run_id: string; session_id: string }> {
  const response = await call(`${url}/api/runs`, { method: 'POST', json: body });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  expect(response.body.status).toBe('queued');
  expect(response.headers.get('location')).toBe(`/api/runs/${response.body.run_id}`);
  return response.body;
}

/** `count` runs started one after another with `body` ({@link startRun}): their ids, in order. */
export async function startRuns(url: string, body: Record<string, unknown>, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push((await startRunAt(url, body)).run_id);
  return ids;
}

export async function waitRun(h: RunHarness, runId: string, status: string, timeoutMs = 20_000): Promise<Record<string, any>> {
  return waitFor(
    `run ${runId} to be ${status}`,
    async () => {
      const run = await call(`${h.url}/api/runs/${runId}`);
      return run.body.status === status ? run.body : undefined;
    },
    timeoutMs,
  );
}

export async function sessionEvents(h: RunHarness, session: string): Promise<RunEvent[]> {
  return (await h.events.readAfter(T, '0-0', 100_000)).map((e) => e.event).filter((e) => e.session === session);
}

/**
 * The session's events once the last one is `type`: a run's status is stored before the event
 * that announces its end is published (one step after the other), so a status read first can
 * come before the event.
 */
export function sessionEventsEndingWith(h: RunHarness, session: string, type: RunEvent['type']): Promise<RunEvent[]> {
  return waitFor(`the session's ${type} event`, async () => {
    const events = await sessionEvents(h, session);
    return events.at(-1)?.type === type ? events : undefined;
  });
}

/** The run and approval scenarios of issue 3, for one harness (Redis + workers, or embedded). */
export function runScenarios(name: string, harness: () => RunHarness): void {
  describe(`runs and approvals: ${name}`, () => {
    it('runs echo end to end: checkpoints, spans and events', async () => {
      const h = harness();
      const { run_id, session_id } = await startRun(h, { agent_id: 'echo', input: { message: 'hi' } });
      await waitRun(h, run_id, 'completed');
      const sessions = await call(`${h.url}/api/sessions?agent_id=echo&limit=500`);
      expect(sessions.body.sessions.map((s: { id: string }) => s.id)).toContain(session_id);
      const history = (await call(`${h.url}/api/sessions/history?session_id=${session_id}`)).body.checkpoints.reverse();
      expect(history.map((c: { seq_num: number }) => c.seq_num)).toEqual([1, 2, 3]);
      expect(history.map((c: { node_id: string }) => c.node_id)).toEqual(['receive', 'respond', '__end__']);
      expect(history[2].state).toMatchObject({ message: 'hi', echoed: true });
      const spans = (await call(`${h.url}/api/traces?session_id=${session_id}`)).body.traces;
      const roots = spans.filter((s: { parent_id: string }) => s.parent_id === '');
      expect(roots).toHaveLength(1);
      expect(roots[0].attributes).toMatchObject({ agent_id: 'echo', run_id, status: 'completed' });
      const children = spans.filter((s: { parent_id: string }) => s.parent_id === roots[0].span_id);
      expect(children.map((s: { name: string }) => s.name)).toEqual(['receive', 'respond']);
      expect(children.every((s: { attributes: Record<string, unknown> }) => s.attributes.status === 'ok' && s.attributes.run_id === run_id)).toBe(true);
      expect(spans).toHaveLength(3);
      const events = await sessionEventsEndingWith(h, session_id, 'completed');
      expect(events.map(brief)).toEqual([
        'node_start:receive',
        'node_end:receive:ok',
        'node_start:respond',
        'node_end:respond:ok',
        'completed',
      ]);
      expect(events.every((e) => e.run_id === run_id && e.agent_id === 'echo')).toBe(true);
    });

    it('pauses human-review for approval; a patch then approve publishes with the patched state', async () => {
      const h = harness();
      const { run_id, session_id } = await startRun(h, { agent_id: 'human-review', input: { topic: 'release notes' } });
      const run = await waitRun(h, run_id, 'interrupted');
      const pending = (await call(`${h.url}/api/approval/pending`)).body.pending.find((a: { run_id: string }) => a.run_id === run_id);
      expect(pending).toMatchObject({ session_id, node_id: 'review', prompt: 'Publish the draft?', agent_id: 'human-review' });
      expect(run.approval_id).toBe(pending.id);
      const state = (await call(`${h.url}/api/sessions/state?session_id=${session_id}`)).body;
      expect(state.node_id).toBe('review');
      const patched = await call(`${h.url}/api/sessions/state?session_id=${session_id}`, { method: 'POST', json: { state: { editor: 'ana' } } });
      expect(patched.status).toBe(200);
      const answer = await call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id: pending.id, approved: true, comment: 'ship it' } });
      expect(answer).toMatchObject({ status: 200, body: { id: pending.id, status: 'approved' } });
      await waitRun(h, run_id, 'completed');
      const final = (await call(`${h.url}/api/sessions/state?session_id=${session_id}`)).body;
      expect(final).toMatchObject({ node_id: '__end__', state: { editor: 'ana', outcome: 'published', comment: 'ship it', approved: true } });
      const types = (await sessionEventsEndingWith(h, session_id, 'completed')).map(brief);
      expect(types).toContain('interrupted:review');
      expect(types.indexOf('approval_decided')).toBeGreaterThan(types.indexOf('interrupted:review'));
      expect(types.at(-1)).toBe('completed');
      expect((await call(`${h.url}/api/approval/pending`)).body.pending.some((a: { id: string }) => a.id === pending.id)).toBe(false);
    });

    it('rejects: the run discards; a second answer is 409, an unknown id 404; one of 20 concurrent answers wins', async () => {
      const h = harness();
      const first = await startRun(h, { agent_id: 'human-review', input: {} });
      const run = await waitRun(h, first.run_id, 'interrupted');
      const rejected = await call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id: run.approval_id, approved: false, comment: 'not yet' } });
      expect(rejected.body).toEqual({ id: run.approval_id, status: 'rejected' });
      await waitRun(h, first.run_id, 'completed');
      expect((await call(`${h.url}/api/sessions/state?session_id=${first.session_id}`)).body.state).toMatchObject({ outcome: 'discarded', comment: 'not yet' });
      const again = await call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id: run.approval_id, approved: true } });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('conflict');
      const unknown = await call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id: 'no-such-approval', approved: true } });
      expect(unknown.status).toBe(404);
      expect((await call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id: 'x' } })).status).toBe(400);

      const second = await startRun(h, { agent_id: 'human-review', input: {} });
      const paused = await waitRun(h, second.run_id, 'interrupted');
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call(`${h.url}/api/approval/respond`, { method: 'POST', json: { id: paused.approval_id, approved: i % 2 === 0 } }),
        ),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409)).toHaveLength(19);
      await waitRun(h, second.run_id, 'completed');
      const decided = (await sessionEvents(h, second.session_id)).filter((e) => e.type === 'approval_decided');
      expect(decided).toHaveLength(1);
    });

    it('fails a run whose node throws; after a state patch, resume completes it', async () => {
      const h = harness();
      const { run_id, session_id } = await startRun(h, { agent_id: 'flaky', input: {} });
      const failed = await waitRun(h, run_id, 'failed');
      expect(failed.error).toBe('work needs fixed: true');
      const ended = await sessionEventsEndingWith(h, session_id, 'failed');
      const events = ended.map(brief);
      expect(events.slice(-2)).toEqual(['node_end:work:error', 'failed']);
      const failedEvent = ended.at(-1)!;
      expect(failedEvent.error).toBe('work needs fixed: true');
      expect((await call(`${h.url}/api/sessions/state?session_id=${session_id}`)).body.node_id).toBe('work');
      await call(`${h.url}/api/sessions/state?session_id=${session_id}`, { method: 'POST', json: { state: { fixed: true } } });
      const resumed = await call(`${h.url}/api/sessions/resume?session_id=${session_id}`, { method: 'POST' });
      expect(resumed.status).toBe(202);
      expect(resumed.body.run_id).not.toBe(run_id);
      await waitRun(h, resumed.body.run_id, 'completed');
      const final = (await call(`${h.url}/api/sessions/state?session_id=${session_id}`)).body;
      expect(final).toMatchObject({ node_id: '__end__', state: { fixed: true, worked: true } });
      const runs = (await call(`${h.url}/api/runs?session_id=${session_id}`)).body.runs;
      expect(runs.map((r: { status: string }) => r.status)).toEqual(['completed', 'failed']);
      expect((await call(`${h.url}/api/sessions/resume?session_id=nope`, { method: 'POST' })).status).toBe(404);
    });

    it('keeps a node’s error short: a 100 KB message is cut on the run and its span', async () => {
      const h = harness();
      const { run_id, session_id } = await startRun(h, { agent_id: 'flaky', input: { loud: true } });
      const failed = await waitRun(h, run_id, 'failed');
      expect(failed.error.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
      expect(failed.error).toMatch(/^work needs fixed: true !+…$/);
      const traces = (await call(`${h.url}/api/traces?session_id=${session_id}`)).body.traces as { attributes: { error?: string } }[];
      const errors = traces.map((t) => t.attributes.error).filter((e): e is string => e !== undefined);
      expect(errors.length).toBeGreaterThan(0);
      for (const error of errors) expect(error.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    });

    it('fails a run that loops forever at the step limit', async () => {
      const h = harness();
      const { run_id, session_id } = await startRun(h, { agent_id: 'loop' });
      const failed = await waitRun(h, run_id, 'failed');
      expect(failed.error).toMatch(/step limit of \d+/);
      const checkpoints = (await h.store.sessions.listCheckpoints(T, session_id, { limit: 500, offset: 0, maxBytes: Infinity })).checkpoints;
      // The first checkpoint plus one per node up to the limit (100); history keeps the newest 50.
      expect(checkpoints[0]!.seq_num).toBe(101);
      expect(checkpoints.map((c) => c.seq_num)).toEqual(Array.from({ length: DEFAULT_STORAGE_LIMITS.checkpointsRetain }, (_, i) => 101 - i));
    });

    it('refuses an unknown agent (400 unknown_agent) and a second run on an active session (409)', async () => {
      const h = harness();
      const unknown = await call(`${h.url}/api/runs`, { method: 'POST', json: { agent_id: 'nobody' } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('unknown_agent');
      const session_id = `s-${randomUUID()}`;
      const { run_id } = await startRun(h, { agent_id: 'human-review', session_id });
      await waitRun(h, run_id, 'interrupted');
      const busy = await call(`${h.url}/api/runs`, { method: 'POST', json: { agent_id: 'human-review', session_id } });
      expect(busy.status).toBe(409);
      const resume = await call(`${h.url}/api/sessions/resume?session_id=${session_id}`, { method: 'POST' });
      expect(resume.status).toBe(409);
      expect((await call(`${h.url}/api/runs`, { method: 'POST', json: { agent_id: 'echo', session_id: 'bad id!' } })).status).toBe(400);
      expect((await call(`${h.url}/api/runs/nope`)).status).toBe(404);
      const agents = (await call(`${h.url}/api/agents`)).body.agents;
      expect(agents.find((a: { id: string }) => a.id === 'echo')).toEqual({
        id: 'echo',
        description: expect.any(String),
        nodes: ['receive', 'respond'],
        entry: 'receive',
      });
    });
  });
}
