import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../src/domain/types.js';
import { listen } from '../../src/http/listen.js';
import { loadWebhooksConfig } from '../../src/integrations/webhook/config.js';
import { configuredReceiver } from '../../src/integrations/webhook/configured-receiver.js';
import { silentLogger } from '../../src/integrations/shared/silent-logger.js';
import { serviceApp } from '../../src/main/service-app.js';
import { startTracing, stopTracing } from '../../src/observability/tracing.js';
import { createScheduleFirer } from '../../src/runtime/schedule-fire.js';
import { call, startTestApi, type TestApi } from '../support/app.js';
import { mount } from '../support/chat.js';
import { spanReceived, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';

const SENDER_TRACE = '7f3a9c0e5d2b41a8b6c4e1f0a9d8c7b6';
const SENDER_SPAN = '1a2b3c4d5e6f7a8b';

let receiver: OtlpReceiver;
let app: TestApi;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  expect(startTracing('embedded')).toBe(true);
  app = await startTestApi();
});
afterAll(async () => {
  await app?.close();
  await stopTracing();
  await receiver.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
});

const received = (what: string, match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> => spanReceived(receiver, what, match);

describe('OpenTelemetry traces of work that does not come through the API', () => {
  it('each schedule fire is a trace of its own, its run under the fire', async () => {
    const { composition } = app;
    const schedule = await composition.schedules.create(DEFAULT_TENANT, { agent_id: 'echo', cron_expr: '* * * * *', input: { from: 'cron' } });
    const firer = createScheduleFirer({ store: composition.backend.store, scheduler: composition.backend.scheduler, runControl: composition.runs, logger: silentLogger() });
    const due = Date.parse('2026-11-21T10:00:00.000Z');
    await firer({ tenant: DEFAULT_TENANT, schedule_id: schedule.id, due_ms: due });
    await firer({ tenant: DEFAULT_TENANT, schedule_id: schedule.id, due_ms: due + 60_000 });
    const history = await waitFor('both runs', async () => {
      const records = await composition.backend.store.schedules.listScheduleHistory(DEFAULT_TENANT, schedule.id);
      return records.length === 2 && records.every((record) => record.status === 'completed') && records;
    });
    const traces = new Set<string>();
    for (const record of history) {
      const fire = await received(`the fire due ${record.due_at}`, (span) => span.name === 'schedule fire' && span.attributes['agentplane.schedule.due_at'] === record.due_at);
      expect(fire).toMatchObject({ parentSpanId: '', kind: 5 });
      expect(fire.attributes).toMatchObject({ 'agentplane.schedule.id': schedule.id, 'agentplane.schedule.outcome': 'started' });
      const run = await received(`the run of ${record.due_at}`, (span) => span.name === 'run echo' && span.attributes['agentplane.run.id'] === record.run_id);
      expect(run).toMatchObject({ traceId: fire.traceId, parentSpanId: fire.spanId });
      traces.add(fire.traceId);
    }
    expect(traces.size).toBe(2);
  });

  it("the webhook receiver, mounted on any Koa app, continues the sender's traceparent: the delivery's span, the run under it", async () => {
    const config = loadWebhooksConfig({ WEBHOOK_ROUTES: 'push=echo', WEBHOOK_SECRET: 'hook-secret' });
    const hooks = configuredReceiver(config, app.composition.runs, silentLogger());
    const server = await mount(hooks.middleware());
    try {
      const delivery = await call(`${server.url}/webhook`, {
        method: 'POST',
        headers: { 'X-Webhook-Secret': 'hook-secret', 'X-Event-Type': 'push', traceparent: `00-${SENDER_TRACE}-${SENDER_SPAN}-01` },
        json: { ref: 'main' },
      });
      expect(delivery).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });
      const span = await received('the delivery span', (s) => s.name === 'webhook push' && s.traceId === SENDER_TRACE);
      expect(span).toMatchObject({ parentSpanId: SENDER_SPAN, kind: 2 });
      const run = await received('the run it started', (s) => s.name === 'run echo' && s.traceId === SENDER_TRACE);
      expect(run.parentSpanId).toBe(span.spanId);
    } finally {
      await server.close();
      await hooks.close();
    }
  });

  it('the webhook receiver as its own process serves it (server spans): the request continues the sender\'s traceparent, the delivery and its run under it', async () => {
    const config = loadWebhooksConfig({ WEBHOOK_ROUTES: 'push=echo', WEBHOOK_SECRET: 'hook-secret' });
    const hooks = configuredReceiver(config, app.composition.runs, silentLogger());
    const server = await listen(serviceApp(app.composition, { draining: false }, [hooks.middleware()]), { port: 0, host: '127.0.0.1' });
    const sender = '2b3c4d5e6f7a8b9c';
    try {
      const delivery = await call(`${server.url}/webhook`, {
        method: 'POST',
        headers: { 'X-Webhook-Secret': 'hook-secret', 'X-Event-Type': 'push', traceparent: `00-${SENDER_TRACE}-${sender}-01` },
        json: { ref: 'main' },
      });
      expect(delivery).toMatchObject({ status: 200, body: { status: 'ok', handled: 1 } });
      const request = await received('the server span', (s) => s.parentSpanId === sender && s.traceId === SENDER_TRACE);
      expect(request).toMatchObject({ name: 'POST /webhook', kind: 2 });
      const span = await received('the delivery span', (s) => s.name === 'webhook push' && s.parentSpanId === request.spanId);
      expect(span).toMatchObject({ traceId: SENDER_TRACE, kind: 1 });
      const run = await received('the run it started', (s) => s.name === 'run echo' && s.parentSpanId === span.spanId);
      expect(run.traceId).toBe(SENDER_TRACE);
    } finally {
      await server.close();
      await hooks.close();
    }
  });
});
