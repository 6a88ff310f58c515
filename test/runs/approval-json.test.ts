import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_APPROVAL_JSON_BYTES, type Approval } from '../../src/domain/types.js';
import { call } from '../support/app.js';
import { onBothBackends } from './backends.js';
import { sessionEvents, waitRun, type RunHarness } from './scenarios.js';

/** Every test here finishes well within this (the default vitest timeout is 60 s). */
const TEST_MS = 30_000;

/** Starts `ask-json` with `input` and answers when it waits for its approval (POST /api/runs/wait). */
async function askJson(h: RunHarness, input: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await call(`${h.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'ask-json', session_id: `json-${randomUUID()}`, input, wait_ms: 20_000 } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body).toMatchObject({ status: 'interrupted', approval: { prompt: 'Go?', node_id: 'ask' } });
  return response.body;
}

async function respond(h: RunHarness, body: unknown): Promise<{ status: number; body: any }> {
  return call(`${h.url}/api/approval/respond`, { method: 'POST', json: body });
}

async function approvalOf(h: RunHarness, id: string): Promise<Approval> {
  const response = await call(`${h.url}/api/approvals/${id}`);
  expect(response.status).toBe(200);
  return response.body as Approval;
}

/** What the node's ctx.interrupt returned, from the completed run's final state. */
async function decisionOf(h: RunHarness, runId: string): Promise<Record<string, unknown>> {
  const run = await waitRun(h, runId, 'completed');
  const state = await call(`${h.url}/api/sessions/state?session_id=${run.session_id}`);
  return state.body.state.decision as Record<string, unknown>;
}

/** The request is as it was asked: pending, no answer, its run still interrupted, no decision published. */
async function expectUnanswered(h: RunHarness, paused: Record<string, any>): Promise<void> {
  const approval = await approvalOf(h, paused.approval.id);
  expect(approval.status).toBe('pending');
  expect(approval).not.toHaveProperty('resume');
  expect((await call(`${h.url}/api/runs/${paused.id}`)).body.status).toBe('interrupted');
  expect((await sessionEvents(h, paused.session_id)).map((e) => e.type)).not.toContain('approval_decided');
}

function approvalJsonScenarios(name: string, harness: () => RunHarness): void {
  describe(`approvals with a JSON payload and answer: ${name}`, () => {
    it(
      'a payload is stored and listed; an answer with resume (object, string, number) approves and ctx.interrupt returns it',
      async () => {
        const h = harness();
        const payload = { question: 'Run get_weather?', tool_call: { name: 'get_weather', args: { city: 'Paris' } }, n: [1, null, true] };
        const paused = await askJson(h, { payload });
        expect(paused.approval.payload).toEqual(payload);
        const pending = (await call(`${h.url}/api/approval/pending?limit=500`)).body.pending as Approval[];
        expect(pending.find((a) => a.id === paused.approval.id)).toMatchObject({ status: 'pending', payload });
        expect(await approvalOf(h, paused.approval.id)).toMatchObject({ payload });

        const resume = { action: 'edit', args: { city: 'Lyon' } };
        const answer = await respond(h, { id: paused.approval.id, resume });
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ id: paused.approval.id, status: 'approved' });
        expect(await decisionOf(h, paused.id)).toEqual({ approved: true, comment: '', resume, has_resume: true });
        expect(await approvalOf(h, paused.approval.id)).toMatchObject({ status: 'approved', payload, resume });
        const decided = (await call(`${h.url}/api/approvals?status=decided&limit=500`)).body.approvals as Approval[];
        expect(decided.find((a) => a.id === paused.approval.id)).toMatchObject({ status: 'approved', resume });

        for (const value of ['yes, go', 42, 0, false, [1, 'two']]) {
          const asked = await askJson(h, {});
          expect(asked.approval).not.toHaveProperty('payload');
          expect(await respond(h, { id: asked.approval.id, resume: value, comment: 'json' })).toMatchObject({ status: 200, body: { status: 'approved' } });
          expect(await decisionOf(h, asked.id)).toEqual({ approved: true, comment: 'json', resume: value, has_resume: true });
          expect((await approvalOf(h, asked.approval.id)).resume).toEqual(value);
        }
      },
      TEST_MS * 2,
    );

    it(
      'approved: false with a resume rejects and still returns it; approved without one returns no resume',
      async () => {
        const h = harness();
        const rejected = await askJson(h, { payload: 'plain text' });
        expect(rejected.approval.payload).toBe('plain text');
        expect(await respond(h, { id: rejected.approval.id, approved: false, resume: { reason: 'too risky' } })).toMatchObject({
          status: 200,
          body: { status: 'rejected' },
        });
        expect(await decisionOf(h, rejected.id)).toEqual({ approved: false, comment: '', resume: { reason: 'too risky' }, has_resume: true });
        expect(await approvalOf(h, rejected.approval.id)).toMatchObject({ status: 'rejected', resume: { reason: 'too risky' } });

        const plain = await askJson(h, { payload: { a: 1 } });
        expect(await respond(h, { id: plain.approval.id, approved: true, comment: 'ok' })).toMatchObject({ status: 200, body: { status: 'approved' } });
        expect(await decisionOf(h, plain.id)).toEqual({ approved: true, comment: 'ok', has_resume: false });
        expect(await approvalOf(h, plain.approval.id)).not.toHaveProperty('resume');
      },
      TEST_MS,
    );

    it(
      'a resume past 64 KiB is 413 and a bad body 400, each changing nothing; the request is answered afterwards',
      async () => {
        const h = harness();
        const paused = await askJson(h, { payload: { q: 1 } });
        const id = paused.approval.id as string;
        // 2 quotes and the characters: one byte past the limit (and a body well within SERVICE_MAX_BODY_BYTES).
        const tooLarge = await respond(h, { id, resume: 'x'.repeat(MAX_APPROVAL_JSON_BYTES - 1) });
        expect(tooLarge.status).toBe(413);
        expect(tooLarge.body.error).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('resume') });
        await expectUnanswered(h, paused);

        const bad: [unknown, RegExp][] = [
          [{ id }, /^body\.approved: required unless resume is given/],
          [{ id, comment: 'neither' }, /^body\.approved: /],
          [{ id, resume: null }, /^body\.resume: expected a JSON value other than null/],
          [{ id, approved: null, resume: 1 }, /^body\.approved: /],
          [{ id, approved: 'yes' }, /^body\.approved: /],
          [{ id, resume: 1, extra: true }, /extra/],
          [{ resume: 1 }, /^body\.id: /],
        ];
        for (const [body, message] of bad) {
          const answer = await respond(h, body);
          expect(answer.status, JSON.stringify(body)).toBe(400);
          expect(answer.body.error.code).toBe('bad_request');
          expect(answer.body.error.message).toMatch(message);
        }
        await expectUnanswered(h, paused);

        expect(await respond(h, { id, resume: 'x'.repeat(MAX_APPROVAL_JSON_BYTES - 2) })).toMatchObject({ status: 200, body: { status: 'approved' } });
        expect(((await decisionOf(h, paused.id)).resume as string).length).toBe(MAX_APPROVAL_JSON_BYTES - 2);
      },
      TEST_MS,
    );

    it(
      'a node asking with a payload past 64 KiB fails as for any bad ctx.interrupt argument; no request is stored',
      async () => {
        const h = harness();
        const response = await call(`${h.url}/api/runs/wait`, { method: 'POST', json: { agent_id: 'ask-json', input: { huge: true }, wait_ms: 20_000 } });
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ status: 'failed', error: expect.stringMatching(/^ctx\.interrupt: The approval payload takes 70002 bytes of JSON/) });
        expect(response.body).not.toHaveProperty('approval_id');
        const pending = (await call(`${h.url}/api/approval/pending?limit=500`)).body.pending as Approval[];
        expect(pending.filter((a) => a.run_id === response.body.id)).toEqual([]);
      },
      TEST_MS,
    );
  });
}

onBothBackends(approvalJsonScenarios);
