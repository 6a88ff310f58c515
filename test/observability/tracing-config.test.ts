import { ROOT_CONTEXT, propagation } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { tracer } from '../../src/observability/tracer.js';
import { flushTracing, startTracing, stopTracing, TRACING_VARIABLES, tracingRequested } from '../../src/observability/tracing.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';

/*
 * The OTEL_* variables as the OpenTelemetry specification defines them, seen from outside: what
 * turns tracing on and off, where spans go (the traces-specific endpoint verbatim, /v1/traces
 * added to the generic one), with which encoding and headers, which spans are sampled, what a
 * setting agentplane cannot serve says at start-up, and that a variable set to "" (as Compose
 * passes an unset `${VAR:-}`) is unset.
 */

let receiver: OtlpReceiver;
/** The receiver's export requests before the current test. */
let before = 0;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});
beforeEach(() => {
  for (const name of TRACING_VARIABLES) delete process.env[name];
  before = receiver.paths.length;
});
afterEach(async () => {
  await stopTracing();
  for (const name of TRACING_VARIABLES) delete process.env[name];
});

/** The export requests of the current test: path, Content-Type and headers of each. */
function requests() {
  return receiver.paths.slice(before).map((path, i) => ({ path, contentType: receiver.contentTypes[before + i], headers: receiver.headers[before + i]! }));
}

/** Starts tracing with `env`, ends one span `name` (a child of `traceparent` when given) and exports it; false when tracing stayed off. */
async function exportOneSpan(env: Record<string, string>, name: string, traceparent?: string): Promise<boolean> {
  Object.assign(process.env, env);
  if (!startTracing('embedded')) return false;
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  tracer()!.startSpan(name, {}, parent).end();
  // Resolves once the batch processor has exported what it held: afterwards, what did not arrive was not sent.
  await flushTracing();
  return true;
}

const exportedNames = () => receiver.spans.map((span) => span.name);

describe('tracingRequested: which OTEL_* settings turn tracing on', () => {
  const endpoint = 'http://collector:4318';
  it.each<[string, Record<string, string>, boolean]>([
    ['nothing set', {}, false],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces` }, true],
    ['OTEL_TRACES_EXPORTER=console alone', { OTEL_TRACES_EXPORTER: 'console' }, true],
    ['OTEL_TRACES_EXPORTER=otlp alone (the SDK default endpoint)', { OTEL_TRACES_EXPORTER: 'otlp' }, true],
    ['OTEL_SDK_DISABLED=true beside an endpoint', { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, false],
    ['OTEL_SDK_DISABLED=TRUE (any case) beside a traces endpoint', { OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint }, false],
    ['OTEL_SDK_DISABLED=false beside an endpoint', { OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true],
    ['OTEL_TRACES_EXPORTER=none beside an endpoint', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, false],
    ['OTEL_TRACES_EXPORTER=none beside a traces endpoint', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint }, false],
    ['an empty OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }, false],
    ['blank endpoints', { OTEL_EXPORTER_OTLP_ENDPOINT: '  ', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ' ' }, false],
    ['every variable empty (Compose with nothing in .env)', Object.fromEntries(TRACING_VARIABLES.map((name) => [name, ''])), false],
  ])('%s: %s', (_name, env, on) => {
    expect(tracingRequested(env)).toBe(on);
  });
});

describe('where spans go', () => {
  it('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone turns tracing on and is used as it is (nothing appended)', async () => {
    expect(await exportOneSpan({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/api/public/otel/v1/traces` }, 'verbatim')).toBe(true);
    expect(requests().map((r) => r.path)).toEqual(['/api/public/otel/v1/traces']);
    expect(exportedNames()).toContain('verbatim');
  });

  it('a traces endpoint without a path goes to / (the SDK adds only the root path)', async () => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url }, 'root path');
    expect(requests().map((r) => r.path)).toEqual(['/']);
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces appended, to its path too', async () => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, 'generic');
    await stopTracing();
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/otel` }, 'generic with a path');
    expect(requests().map((r) => r.path)).toEqual(['/v1/traces', '/otel/v1/traces']);
  });

  it('the traces endpoint wins over the generic one', async () => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/generic`, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/traces-only` }, 'both');
    expect(requests().map((r) => r.path)).toEqual(['/traces-only']);
  });

  it('an empty traces endpoint, protocol and headers beside a generic endpoint are unset: the generic settings apply', async () => {
    const empty = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '', OTEL_EXPORTER_OTLP_TRACES_HEADERS: '' };
    await exportOneSpan({ ...empty, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=acme' }, 'empty');
    expect(requests()).toEqual([{ path: '/v1/traces', contentType: 'application/json', headers: expect.objectContaining({ 'x-tenant': 'acme' }) }]);
  });

  it('every other variable empty (Compose forwarding an empty .env): the defaults, service.name agentplane, the span sampled', async () => {
    const empty = Object.fromEntries(TRACING_VARIABLES.map((name) => [name, '']));
    await exportOneSpan({ ...empty, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, 'defaults');
    expect(requests()).toEqual([expect.objectContaining({ path: '/v1/traces', contentType: 'application/x-protobuf' })]);
    const span = receiver.spans.find((s) => s.name === 'defaults')!;
    expect(span.resource).toMatchObject({ 'service.name': 'agentplane', 'agentplane.role': 'embedded' });
  });
});

describe('the protocol', () => {
  it('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL overrides OTEL_EXPORTER_OTLP_PROTOCOL, either way', async () => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }, 'json');
    await stopTracing();
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }, 'protobuf');
    expect(requests().map((r) => r.contentType)).toEqual(['application/json', 'application/x-protobuf']);
    expect(exportedNames()).toEqual(expect.arrayContaining(['json', 'protobuf']));
  });

  it('a traces protocol it serves makes a generic one it does not serve irrelevant', async () => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }, 'overridden');
    expect(requests().map((r) => r.contentType)).toEqual(['application/json']);
  });

  it.each([
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, 'grpc'],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/proto' }, 'http/proto'],
    ['OTEL_TRACES_EXPORTER', { OTEL_TRACES_EXPORTER: 'zipkin' }, 'zipkin'],
  ])('a value it cannot serve is a ConfigError naming %s, and tracing stays off', (variable, env, value) => {
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, env);
    let error: unknown;
    try {
      startTracing('embedded');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ variable });
    expect((error as Error).message).toContain(`${variable}: "${value}"`);
    expect(tracer()).toBeUndefined();
  });
});

describe('headers', () => {
  it('OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS reach the endpoint, the traces-specific value winning', async () => {
    await exportOneSpan(
      {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-generic=from-generic,x-project=generic',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'Authorization=Basic cGs6c2s=,x-project=traces',
      },
      'with headers',
    );
    const [request] = requests();
    expect(request?.headers).toMatchObject({ 'x-generic': 'from-generic', 'x-project': 'traces', authorization: 'Basic cGs6c2s=' });
  });
});

describe('sampling', () => {
  it('OTEL_TRACES_SAMPLER=traceidratio with OTEL_TRACES_SAMPLER_ARG=0 exports nothing', async () => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, 'never sampled');
    expect(requests()).toEqual([]);
    expect(exportedNames()).not.toContain('never sampled');
  });

  it('OTEL_TRACES_SAMPLER=parentbased_always_on exports a root span and a sampled parent\'s child, not an unsampled parent\'s', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'parentbased_always_on' };
    await exportOneSpan(env, 'unsampled parent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00');
    expect(requests()).toEqual([]);
    await exportOneSpan(env, 'sampled root');
    await exportOneSpan(env, 'sampled parent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(exportedNames()).toEqual(expect.arrayContaining(['sampled root', 'sampled parent']));
    expect(exportedNames()).not.toContain('unsampled parent');
  });
});
