import { z } from 'zod';
import { shareOf } from '../../domain/fair-share.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { errorResponses } from '../schemas.js';

export const QueueSchema = z
  .object({
    tenant: z.string(),
    queued: z.number().int().meta({ description: 'the tenant’s runs waiting for a worker slot (delayed starts included)' }),
    running: z.number().int().meta({ description: 'the tenant’s runs admitted to worker slots' }),
    max_queued: z.number().int().meta({ description: 'its queued cap: one more start is refused (429); 0: no cap' }),
    max_running: z.number().int().meta({ description: 'its running cap; 0: no cap beyond its fair share' }),
  })
  .meta({ id: 'TenantQueue' });

/** The caller's tenant's place in the run queue, as the console's runs page shows it. */
export function queueRoutes(deps: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/queue',
      operationId: 'getQueue',
      summary: "The tenant's run queue: runs waiting for a worker slot and running, with its caps",
      tag: 'runs',
      responses: { 200: { description: "The tenant's queue", schema: QueueSchema }, ...errorResponses(401, 403, 429) },
      handler: async ({ principal }) => {
        const depth = await deps.runs.queueDepth(principal.tenant);
        const share = shareOf(deps.config.fairShare, principal.tenant);
        return { status: 200, body: { tenant: principal.tenant, queued: depth.queued, running: depth.running, max_queued: share.maxQueued, max_running: share.maxRunning } };
      },
    }),
  ];
}
