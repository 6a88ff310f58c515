import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTracing, startTracing, stopTracing } from '../../src/observability/tracing.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { spanReceived, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await stopTracing();
  await receiver.close();
});

const received = (what: string, match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> => spanReceived(receiver, what, match);

async function runToEnd(app: TestApi, headers: Record<string, string>): Promise<{ id: string; session_id: string }> {
  const response = await fetch(`${app.url}/api/runs/wait`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ agent_id: 'echo', input: { hello: 'world' } }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { id: string; session_id: string };
}

describe('OpenTelemetry traces (embedded, OTLP http/protobuf)', () => {
  let app: TestApi;
  beforeAll(async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_SERVICE_NAME = 'agentplane-test';
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=test';
    expect(startTracing('embedded')).toBe(true);
    app = await startTestApi({ env: { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => {
    await app.close();
    await stopTracing();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  });

  it("continues the caller's traceparent: the server span, the run and its nodes in one tree", async () => {
    const run = await runToEnd(app, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    const server = await received('the server span', (span) => span.name === 'POST /api/runs/wait' && span.traceId === CALLER_TRACE);
    expect(server).toMatchObject({ parentSpanId: CALLER_SPAN, kind: 2 });
    expect(server.attributes).toMatchObject({ 'http.route': '/api/runs/wait', 'http.request.method': 'POST', 'http.response.status_code': 200 });
    expect(server.resource).toMatchObject({ 'service.name': 'agentplane-test', 'agentplane.role': 'embedded', 'deployment.environment.name': 'test' });
    expect(server.resource['service.instance.id']).toEqual(expect.any(String));
    const attempt = await received('the run span', (span) => span.name === 'run echo' && span.attributes['agentplane.run.id'] === run.id);
    expect(attempt).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: server.spanId, kind: 5 });
    expect(attempt.attributes).toMatchObject({ 'agentplane.session.id': run.session_id, 'agentplane.run.status': 'completed' });
    const receive = await received('the receive node', (span) => span.name === 'node receive' && span.attributes['agentplane.run.id'] === run.id);
    const respond = await received('the respond node', (span) => span.name === 'node respond' && span.attributes['agentplane.run.id'] === run.id);
    for (const node of [receive, respond]) expect(node).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: attempt.spanId });
    expect(receiver.contentTypes.every((type) => type === 'application/x-protobuf')).toBe(true);

    // One trace, two views: the stored spans carry the ids they were exported under.
    const { traces: stored } = (await (await fetch(`${app.url}/api/traces?session_id=${run.session_id}`)).json()) as { traces: Record<string, unknown>[] };
    expect(stored.find((span) => span.name === 'respond')).toMatchObject({ trace_id: CALLER_TRACE, trace_span_id: respond.spanId });
    expect(stored.find((span) => span.name === 'receive')).toMatchObject({ trace_id: CALLER_TRACE, trace_span_id: receive.spanId });
    expect(stored.find((span) => span.span_id === run.id)).toMatchObject({ trace_id: CALLER_TRACE, trace_span_id: attempt.spanId });
    // Log lines inside the request carry its trace.
    expect(app.logs.find((line) => line.msg === 'request' && line.route === '/api/runs/wait')).toMatchObject({ trace_id: CALLER_TRACE });
  });

  it("posts a run's webhook as a client span of the run's trace, with its traceparent", async () => {
    const deliveries: IncomingHttpHeaders[] = [];
    const hook = createServer((req, res) => {
      deliveries.push(req.headers);
      req.resume();
      res.end();
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = hook.address() as AddressInfo;
      const response = await fetch(`${app.url}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
        body: JSON.stringify({ assistant_id: 'echo', input: {}, webhook: `http://127.0.0.1:${port}/hook` }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      const delivery = await waitFor('the webhook delivery', () => deliveries[0]);
      const post = await received('the webhook client span', (span) => span.name === 'POST' && span.kind === 3);
      expect(post.traceId).toBe(CALLER_TRACE);
      expect(delivery.traceparent).toBe(`00-${CALLER_TRACE}-${post.spanId}-01`);
      expect(post.attributes).toMatchObject({ 'url.full': `http://127.0.0.1:${port}/hook`, 'http.response.status_code': 200 });
    } finally {
      await new Promise<void>((resolve) => hook.close(() => resolve()));
    }
  });

  it('begins a trace for a request without traceparent', async () => {
    const run = await runToEnd(app, {});
    const attempt = await received('the run span', (span) => span.name === 'run echo' && span.attributes['agentplane.run.id'] === run.id);
    const server = await received('its server span', (span) => span.spanId === attempt.parentSpanId);
    expect(server).toMatchObject({ name: 'POST /api/runs/wait', parentSpanId: '', traceId: attempt.traceId });
  });
});

describe('tracing off (no OTEL_* settings)', () => {
  it('sends nothing and stores no trace ids', async () => {
    expect(startTracing('embedded')).toBe(false);
    const before = receiver.spans.length;
    const requests = receiver.contentTypes.length;
    const app = await startTestApi();
    try {
      const run = await runToEnd(app, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
      const { traces: stored } = (await (await fetch(`${app.url}/api/traces?session_id=${run.session_id}`)).json()) as { traces: Record<string, unknown>[] };
      expect(stored.length).toBeGreaterThan(0);
      for (const span of stored) expect(span).not.toHaveProperty('trace_id');
      expect(app.logs.some((line) => 'trace_id' in line)).toBe(false);
    } finally {
      await app.close();
    }
    await flushTracing();
    expect(receiver.spans.length).toBe(before);
    expect(receiver.contentTypes.length).toBe(requests);
  });
});
