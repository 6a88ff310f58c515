import { ROOT_CONTEXT, propagation } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { tracer } from '../../src/observability/tracer.js';
import { flushTracing, startTracing, stopTracing, TRACING_VARIABLES, tracingRequested } from '../../src/observability/tracing.js';
import { captureLogger } from '../support/chat.js';
import { spanReceived, startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { startProcess } from '../support/processes.js';

/*
 * The OTEL_* variables as the OpenTelemetry specification defines them, seen from outside: what
 * turns tracing on and off, where spans go (the traces-specific endpoint verbatim, /v1/traces
 * added to the generic one), with which encoding and headers, which spans are sampled, what a
 * setting agentplane cannot serve says at start-up, what it says of a value it does not recognise
 * (one warning line, the setting ignored, as the specification has it), several exporters at once,
 * and that a variable set to "" (as Compose passes an unset `${VAR:-}`) is unset.
 */

let receiver: OtlpReceiver;
/** The receiver's export requests before the current test. */
let before = 0;
/** The logger startTracing is given, and what it logged in the current test. */
let log: ReturnType<typeof captureLogger>;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});
beforeEach(() => {
  for (const name of TRACING_VARIABLES) delete process.env[name];
  before = receiver.paths.length;
  log = captureLogger();
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
  if (!startTracing('embedded', log.logger)) return false;
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  tracer()!.startSpan(name, {}, parent).end();
  // Resolves once the batch processor has exported what it held: afterwards, what did not arrive was not sent.
  await flushTracing();
  return true;
}

const exportedNames = () => receiver.spans.map((span) => span.name);

/** The warning lines logged in the current test. */
const warnings = () => log.records.filter((record) => record.level === 40).map((record) => record.msg);

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
    ['OTEL_TRACES_EXPORTER=otlp,console', { OTEL_TRACES_EXPORTER: 'otlp,console' }, true],
    ['OTEL_TRACES_EXPORTER= Console , NONE  (spaces, any case)', { OTEL_TRACES_EXPORTER: ' Console , NONE ' }, true],
    ['OTEL_TRACES_EXPORTER=none,none', { OTEL_TRACES_EXPORTER: 'none,none', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, false],
    ['OTEL_TRACES_EXPORTER=zipkin alone (ignored: as if unset)', { OTEL_TRACES_EXPORTER: 'zipkin' }, false],
    ['OTEL_TRACES_EXPORTER=zipkin beside an endpoint', { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true],
    ['OTEL_TRACES_EXPORTER=none,zipkin beside an endpoint', { OTEL_TRACES_EXPORTER: 'none,zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, false],
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
  ])('a value it cannot serve is a ConfigError naming %s, and tracing stays off', (variable, env, value) => {
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, env);
    let error: unknown;
    try {
      startTracing('embedded', log.logger);
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

const UNSAMPLED_PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
const UNKNOWN_SAMPLER_WARNING =
  'OTEL_TRACES_SAMPLER: "sometimes" is not a sampler agentplane has (always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio); using the default, parentbased_always_on';

describe('a sampler setting it does not recognise: one warning line, the setting ignored (the specification\'s rule)', () => {
  it('an unknown OTEL_TRACES_SAMPLER: one warning naming it, its value and the default used instead, parentbased_always_on, which samples a root span and follows an unsampled parent', async () => {
    // The argument is the default sampler's no more: 0 would sample nothing under traceidratio.
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'sometimes', OTEL_TRACES_SAMPLER_ARG: '0' };
    await exportOneSpan(env, 'root under the default');
    await exportOneSpan(env, 'child of an unsampled parent', UNSAMPLED_PARENT);
    expect(exportedNames()).toContain('root under the default');
    expect(exportedNames()).not.toContain('child of an unsampled parent');
    expect(warnings()).toEqual([UNKNOWN_SAMPLER_WARNING]);
  });

  it.each([' TraceIdRatio ', 'PARENTBASED_TRACEIDRATIO'])('OTEL_TRACES_SAMPLER=%s is recognised in any case, spaces around it: with OTEL_TRACES_SAMPLER_ARG=0 nothing is exported, nothing warned', async (sampler) => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: '0' }, 'never sampled');
    expect(requests()).toEqual([]);
    expect(warnings()).toEqual([]);
  });

  it.each([
    ['traceidratio', 'abc'],
    ['traceidratio', '50%'],
    ['traceidratio', '1.5'],
    ['parentbased_traceidratio', '-0.1'],
  ])('%s with OTEL_TRACES_SAMPLER_ARG=%s: one warning naming the argument and its value, and the ratio 1.0 instead (the span exported)', async (sampler, arg) => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg }, 'sampled at 1.0');
    expect(exportedNames()).toContain('sampled at 1.0');
    expect(warnings()).toEqual([`OTEL_TRACES_SAMPLER_ARG: "${arg}" is not a probability from 0 to 1 (the argument of ${sampler}); using the default, 1.0`]);
  });

  it('no warning for settings it serves: an empty argument (1.0), an argument beside a sampler that takes none, the default sampler', async () => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '' }, 'empty argument');
    await stopTracing();
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: '0.5' }, 'always on');
    await stopTracing();
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: '', OTEL_TRACES_SAMPLER_ARG: '' }, 'default');
    expect(exportedNames()).toEqual(expect.arrayContaining(['empty argument', 'always on', 'default']));
    expect(warnings()).toEqual([]);
  });

  it('an API process logs that warning once at start, at warn level, and traces with the default', async () => {
    const proc = await startProcess({
      entry: 'src/main/api.ts',
      env: {
        REDIS_URL: undefined,
        AGENTS_MODULE: 'test/fixtures/agents.ts',
        LOG_LEVEL: 'info',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_TRACES_SAMPLER: 'sometimes',
      },
    });
    try {
      await proc.waitForLine((line) => line.json?.msg === 'OpenTelemetry tracing on');
      const named = proc.lines.filter((line) => line.text.includes('OTEL_TRACES_SAMPLER'));
      expect(named.map((line) => line.json)).toEqual([expect.objectContaining({ level: 40, msg: UNKNOWN_SAMPLER_WARNING })]);
      expect((await fetch(`${proc.url}/api/sessions?limit=3`)).status).toBe(200);
      const span = await spanReceived(receiver, 'the request span of the process', (s) => s.name === 'GET /api/sessions' && s.resource['agentplane.role'] === 'embedded');
      expect(span.parentSpanId).toBe('');
    } finally {
      await proc.stop();
    }
  });
});

describe('OTEL_TRACES_EXPORTER as a comma-separated list', () => {
  /** The names of the spans the console exporter printed in the current test. */
  let printed: () => string[];
  beforeEach(() => {
    const dir = vi.spyOn(console, 'dir').mockImplementation(() => undefined);
    printed = () => dir.mock.calls.map(([span]) => (span as { name: string }).name);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each(['otlp,console', ' Console , OTLP,console '])('OTEL_TRACES_EXPORTER=%s exports each span to the OTLP endpoint and prints it once on the console, warning nothing', async (exporters) => {
    expect(await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: exporters }, 'both')).toBe(true);
    expect(exportedNames()).toContain('both');
    expect(printed()).toEqual(['both']);
    expect(warnings()).toEqual([]);
  });

  it('console alone beside an OTLP endpoint prints and sends nothing to the endpoint', async () => {
    await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: 'console' }, 'console only');
    expect(printed()).toEqual(['console only']);
    expect(requests()).toEqual([]);
  });

  it('an OTLP protocol it cannot serve is still a ConfigError when otlp is one of several', () => {
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: 'console,otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(() => startTracing('embedded', log.logger)).toThrow(ConfigError);
    expect(tracer()).toBeUndefined();
  });

  it.each(['console,none', 'none,console'])('OTEL_TRACES_EXPORTER=%s: none beside other exporters is one warning, and the default, otlp, alone (as the OpenTelemetry Node SDK does)', async (exporters) => {
    expect(await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: exporters }, 'default exporter')).toBe(true);
    expect(exportedNames()).toContain('default exporter');
    expect(printed()).toEqual([]);
    expect(warnings()).toEqual([`OTEL_TRACES_EXPORTER: "none" cannot be combined with other exporters ("${exporters}"); exporting with the default, otlp`]);
  });

  it.each<[string, Record<string, string>, string[], string[], string]>([
    ['beside otlp', { OTEL_TRACES_EXPORTER: 'otlp,zipkin' }, ['exported'], [], '"zipkin" is not an exporter agentplane has (otlp, console or none), ignored; exporting with otlp'],
    ['beside console', { OTEL_TRACES_EXPORTER: 'zipkin,console,jaeger' }, [], ['exported'], '"zipkin", "jaeger" are not exporters agentplane has (otlp, console or none), ignored; exporting with console'],
    ['alone: as if unset, the endpoint\'s otlp', { OTEL_TRACES_EXPORTER: 'Zipkin' }, ['exported'], [], '"Zipkin" is not an exporter agentplane has (otlp, console or none), ignored; exporting with otlp'],
  ])('an exporter it does not have %s: one warning naming it, the others used', async (name, env, sent, shown, warning) => {
    // Named after the row: the receiver keeps the spans of earlier tests.
    const span = `exported ${name}`;
    expect(await exportOneSpan({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env }, span)).toBe(true);
    expect(exportedNames().filter((exported) => exported === span)).toEqual(sent.map(() => span));
    expect(printed()).toEqual(shown.map(() => span));
    expect(warnings()).toEqual([`OTEL_TRACES_EXPORTER: ${warning}`]);
  });

  it.each<[string, Record<string, string>, string]>([
    ['alone, without an endpoint', { OTEL_TRACES_EXPORTER: 'zipkin' }, 'tracing stays off (no OTLP endpoint is set)'],
    ['beside none', { OTEL_TRACES_EXPORTER: 'none,zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, 'tracing stays off (none)'],
  ])('an exporter it does not have %s: the warning says tracing stays off, and it does', (_name, env, outcome) => {
    Object.assign(process.env, env);
    expect(startTracing('embedded', log.logger)).toBe(false);
    expect(tracer()).toBeUndefined();
    expect(warnings()).toEqual([`OTEL_TRACES_EXPORTER: "zipkin" is not an exporter agentplane has (otlp, console or none), ignored; ${outcome}`]);
  });
});
