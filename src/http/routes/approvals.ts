import { z } from 'zod';
import { notFound } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { pageQuery } from '../validate.js';
import { errorResponses, IdParam, Timestamp } from '../schemas.js';
import { holdForRun, WaitMs, waitedRun } from '../run-wait.js';
import { WaitedRunSchema } from './runs.js';

const ApprovalSchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    node_id: z.string().meta({ description: 'node awaiting the decision' }),
    prompt: z.string(),
    requested_at: Timestamp,
    run_id: z.string(),
    agent_id: z.string(),
    status: z.enum(['pending', 'approved', 'rejected', 'cancelled']).meta({ description: '`cancelled`: closed unanswered with its run' }),
    comment: z.string().optional(),
    decided_by: z.string().optional().meta({ description: 'the deciding principal; `timeout` when it expired' }),
    decided_at: Timestamp.optional(),
    expires_at: Timestamp.optional().meta({ description: 'when the system decides it if nobody has (`ctx.interrupt({ expires_in_ms })`)' }),
    on_timeout: z.enum(['approve', 'reject', 'fail']).optional().meta({ description: 'what the system decides at `expires_at`' }),
    payload: z.unknown().optional().meta({
      description: 'JSON the request carries for whoever answers it (`ctx.interrupt({ payload })`, a LangGraph interrupt value; at most 64 KiB)',
    }),
    resume: z.unknown().optional().meta({ description: 'the JSON answer given with the decision (`resume` of POST /api/approval/respond), when one was' }),
  })
  .meta({ id: 'ApprovalRequest' });

/**
 * The JSON answer of a respond: any JSON value but null, which LangGraph does not resume with
 * (`Command({ resume: null })` resumes nothing), so a null is refused rather than lost.
 */
const ResumeValue = z
  .union([z.string(), z.number(), z.boolean(), z.array(z.unknown()), z.record(z.string(), z.unknown())], {
    error: 'expected a JSON value other than null (a string, number, boolean, array or object)',
  })
  .meta({
    description:
      'the JSON answer (any JSON but null, at most 64 KiB: 413 past it) the paused node receives (`ctx.interrupt` returns it as `resume`; a LangGraph graph `Command({ resume })`); recorded on the approval',
  });

/**
 * The approvals inbox: pending requests (user+), the answer that unblocks a paused run, the
 * requests by status (user+, as every approvals listing) and one request by id (viewer+).
 */
export function approvalRoutes(deps: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/approval/pending',
      operationId: 'listPendingApprovals',
      summary: 'Pending approval requests, oldest first',
      tag: 'approvals',
      minRole: 'user',
      query: z.object(pageQuery(100, 500)),
      responses: {
        200: { description: 'A page of the pending requests', schema: z.object({ pending: z.array(ApprovalSchema) }) },
        ...errorResponses(400, 401, 403, 429),
      },
      handler: async ({ query, principal }) => ({
        status: 200,
        body: { pending: await deps.store.approvals.listPendingApprovals(principal.tenant, query) },
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/approvals',
      operationId: 'listApprovals',
      summary: 'Approval requests by status: pending (oldest first) or decided (newest decision first)',
      tag: 'approvals',
      minRole: 'user',
      query: z.object({
        status: z
          .enum(['pending', 'decided'])
          .default('pending')
          .meta({ description: '`pending`: as GET /api/approval/pending; `decided`: approved, rejected, or cancelled with their run' }),
        ...pageQuery(100, 500),
      }),
      responses: {
        200: { description: 'A page of the requests', schema: z.object({ approvals: z.array(ApprovalSchema) }) },
        ...errorResponses(400, 401, 403, 429),
      },
      handler: async ({ query, principal }) => {
        const { approvals } = deps.store;
        const page = { limit: query.limit, offset: query.offset };
        const listed =
          query.status === 'pending' ? await approvals.listPendingApprovals(principal.tenant, page) : await approvals.listDecidedApprovals(principal.tenant, page);
        return { status: 200, body: { approvals: listed } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/approvals/:id',
      operationId: 'getApproval',
      summary: 'One approval request, pending or decided',
      tag: 'approvals',
      params: z.object({ id: IdParam }),
      responses: { 200: { description: 'The request', schema: ApprovalSchema }, ...errorResponses(400, 401, 403, 404, 429) },
      handler: async ({ params, principal }) => {
        const approval = await deps.store.approvals.getApproval(principal.tenant, params.id);
        if (!approval) throw notFound('The approval request');
        return { status: 200, body: approval };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/approval/respond',
      operationId: 'respondToApproval',
      summary: 'Approve or reject a pending request, optionally with a JSON answer (resume); the paused run resumes',
      tag: 'approvals',
      body: z
        .strictObject({
          id: z.string().min(1),
          approved: z.boolean().optional().meta({ description: 'required unless `resume` is given; with `resume` and no `approved`, the request is approved' }),
          resume: ResumeValue.optional(),
          comment: z.string().max(10_000).optional(),
          wait_ms: WaitMs.optional().meta({
            description: 'also hold the answer until the resumed run next stops (or this many ms pass) and answer the run as POST /api/runs/wait does',
          }),
        })
        .refine((body) => body.approved !== undefined || body.resume !== undefined, { path: ['approved'], error: 'required unless resume is given' }),
      bodyExamples: {
        approve: { summary: 'approve (the id is one of GET /api/approval/pending)', value: { id: '0195f3c2-7d41-7a0e-9b1c-4f7e2d9a1b20.2', approved: true, comment: 'ship it' } },
        'answer with JSON': {
          summary: 'answer with a JSON value (`resume`): approved, and the paused node (or LangGraph interrupt) receives it',
          value: { id: '0195f3c2-7d41-7a0e-9b1c-4f7e2d9a1b20.2', resume: { action: 'edit', args: { city: 'Paris' } } },
        },
        'reject and wait': {
          summary: 'reject, and answer once the resumed run next stops',
          value: { id: '0195f3c2-7d41-7a0e-9b1c-4f7e2d9a1b20.2', approved: false, comment: 'not yet', wait_ms: 30_000 },
        },
      },
      responses: {
        200: {
          description: 'Decided (with `wait_ms`: plus the run at its next stop, or as it stands when `wait_ms` passed first)',
          schema: z.object({ id: z.string(), status: z.enum(['approved', 'rejected']), run: WaitedRunSchema.optional() }),
        },
        // 410 (with wait_ms): the resumed run vanished with its session while the answer waited.
        ...errorResponses(400, 401, 403, 404, 409, 410, 413, 415, 429, 503),
      },
      handler: async ({ body, principal, ctx }) => {
        const decision = {
          approved: body.approved ?? true,
          comment: body.comment ?? '',
          ...(body.resume === undefined ? {} : { resume: body.resume }),
          decided_by: principal.subject,
        };
        if (body.wait_ms === undefined) {
          const approval = await deps.runs.answerApproval(principal.tenant, body.id, decision);
          return { status: 200, body: { id: approval.id, status: approval.status } };
        }
        // Subscribed before the decision: the resumed run's next stop cannot be missed.
        const held = await holdForRun(deps, ctx, principal);
        try {
          const approval = await deps.runs.answerApproval(principal.tenant, body.id, { ...decision, waited: true });
          // Events since the subscription are held until now, as for POST /api/runs/wait. The
          // run's `interrupted` for this very approval may be among them or come later (it is
          // published after the run is marked interrupted): it is not the next stop.
          held.follow(approval.run_id, (e) => e.event.type === 'interrupted' && e.event.approval_id === body.id);
          const stop = await held.until(body.wait_ms);
          const run = await waitedRun(deps, principal.tenant, approval, stop);
          return { status: 200, body: { id: approval.id, status: approval.status, run } };
        } finally {
          held.done();
        }
      },
    }),
  ];
}
