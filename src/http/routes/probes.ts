import { withTimeout } from '../../domain/timeout.js';
import type { AppDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { HealthSchema, ReadySchema } from '../schemas.js';

const READY_TIMEOUT_MS = 1000;

/** Liveness, readiness and metrics: always public, never rate limited. */
export function probeRoutes(deps: Pick<AppDeps, 'readiness' | 'lifecycle' | 'metrics' | 'liveWorkers'>): AnyRoute[] {
  const live = (path: string, operationId: string) =>
    defineRoute({
      method: 'GET',
      path,
      operationId,
      summary: 'Liveness: the process is up',
      tag: 'probes',
      public: true,
      responses: { 200: { description: 'The process is up', schema: HealthSchema } },
      handler: async () => ({ status: 200, body: { status: 'ok' } }),
    });

  return [
    live('/healthz', 'healthz'),
    live('/health', 'health'),
    live('/health/live', 'healthLive'),
    defineRoute({
      method: 'GET',
      path: '/health/ready',
      operationId: 'healthReady',
      summary: 'Readiness: storage answers and the replica accepts traffic',
      tag: 'probes',
      public: true,
      responses: {
        200: { description: 'Ready', schema: ReadySchema },
        503: { description: 'A dependency is down or the replica is draining', schema: ReadySchema },
      },
      handler: async () => {
        const names = Object.keys(deps.readiness);
        const [results, workers] = await Promise.all([
          Promise.allSettled(names.map((name) => withTimeout(deps.readiness[name]!(), READY_TIMEOUT_MS))),
          deps.liveWorkers && workersCheck(deps.liveWorkers),
        ]);
        const checks: Record<string, string> = {};
        names.forEach((name, i) => {
          checks[name] = results[i]!.status === 'fulfilled' ? 'ok' : 'unavailable';
        });
        // Informational: without workers this replica still serves everything but the runs' execution.
        if (workers) checks.workers = workers;
        if (deps.lifecycle.draining) checks.shutdown = 'draining';
        const ready = !deps.lifecycle.draining && results.every((r) => r.status === 'fulfilled');
        return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'unavailable', checks } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics in the text exposition format',
      tag: 'probes',
      public: true,
      responses: { 200: { description: 'Metrics', contentType: 'text/plain; version=0.0.4; charset=utf-8' } },
      handler: async ({ ctx }) => {
        ctx.type = 'text/plain; version=0.0.4; charset=utf-8';
        ctx.body = await deps.metrics.registry.metrics();
        return 'handled';
      },
    }),
  ];
}

/** `ok` with a worker alive, `none` without (queued runs wait), `unavailable` when it cannot be told. */
function workersCheck(liveWorkers: () => Promise<number>): Promise<string> {
  return withTimeout(liveWorkers(), READY_TIMEOUT_MS).then(
    (count) => (count > 0 ? 'ok' : 'none'),
    () => 'unavailable',
  );
}
