import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { pageQuery } from '../validate.js';
import { errorResponses, Timestamp } from '../schemas.js';

const ApprovalSchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    node_id: z.string().meta({ description: 'node awaiting the decision' }),
    prompt: z.string(),
    requested_at: Timestamp,
    run_id: z.string(),
    agent_id: z.string(),
    status: z.enum(['pending', 'approved', 'rejected']),
    comment: z.string().optional(),
    decided_by: z.string().optional(),
    decided_at: Timestamp.optional(),
  })
  .meta({ id: 'ApprovalRequest' });

/** The approvals inbox: pending requests (user+) and the answer that unblocks a paused run. */
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
      method: 'POST',
      path: '/api/approval/respond',
      operationId: 'respondToApproval',
      summary: 'Approve or reject a pending request; the paused run resumes',
      tag: 'approvals',
      body: z.strictObject({
        id: z.string().min(1),
        approved: z.boolean(),
        comment: z.string().max(10_000).optional(),
      }),
      responses: {
        200: {
          description: 'Decided',
          schema: z.object({ id: z.string(), status: z.enum(['approved', 'rejected']) }),
        },
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429),
      },
      handler: async ({ body, principal }) => {
        const approval = await deps.runs.answerApproval(principal.tenant, body.id, {
          approved: body.approved,
          comment: body.comment ?? '',
          decided_by: principal.subject,
        });
        return { status: 200, body: { id: approval.id, status: approval.status } };
      },
    }),
  ];
}
