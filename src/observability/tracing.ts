import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { ConfigError } from '../config.js';
import { setTracer } from './tracer.js';

/** What a process is, as its resource says (`agentplane.role`). */
export type TracingRole = 'api' | 'worker' | 'webhooks' | 'embedded';

/**
 * The variables tracing reads, in every process (the OpenTelemetry specification's, which the
 * SDK and its exporters read themselves, and the two opt-ins of agentplane's spans).
 */
export const TRACING_VARIABLES: readonly string[] = Object.freeze([
  'OTEL_SDK_DISABLED',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_EXPORTER',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  'OTEL_EXPORTER_OTLP_COMPRESSION',
  'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT',
  'AGENTPLANE_OTEL_RECORD_TENANT',
]);

/** The instrumentation scope of every span agentplane makes. */
const SCOPE = 'agentplane';

let provider: NodeTracerProvider | undefined;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Whether the `OTEL_*` variables ask for traces: not when `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`; yes when `OTEL_TRACES_EXPORTER` names an exporter or an OTLP
 * endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set.
 * `OTEL_TRACES_EXPORTER` is a comma-separated list; names agentplane does not have are
 * ignored ({@link exportersOf}). Unconfigured, tracing is off: the SDK is never loaded into the hot path.
 */
export function tracingRequested(env: Env): boolean {
  return !isTrue(env.OTEL_SDK_DISABLED) && exportersOf(env).on;
}

/**
 * Starts the OpenTelemetry trace SDK of this process when the `OTEL_*` variables ask for it
 * ({@link tracingRequested}), before anything it instruments: a NodeTracerProvider (sampler from
 * `OTEL_TRACES_SAMPLER`/`_ARG`, {@link samplerOf}) with a processor per exporter of
 * `OTEL_TRACES_EXPORTER` ({@link exportersOf}): for `otlp` a BatchSpanProcessor (`OTEL_BSP_*`)
 * and the OTLP exporter of `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`/`OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`http/protobuf`, the default, or `http/json`; endpoint, headers, timeout and compression as
 * the exporters read them), for `console` a SimpleSpanProcessor and the ConsoleSpanExporter; W3C
 * trace context and baggage, and a resource of `service.name` (agentplane), `service.version`,
 * `service.instance.id` and `agentplane.role` under what `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` say; message content on GenAI spans with
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the tenant on run spans with
 * `AGENTPLANE_OTEL_RECORD_TENANT=true`. Returns whether tracing is on; a second call does nothing.
 * A sampler, sampler argument or exporter it does not recognise is ignored, as the OpenTelemetry
 * specification has it, with one warning line each on `logger` (stderr without one) saying what
 * is used instead. An OTLP protocol it cannot serve is a ConfigError naming the variable.
 */
export function startTracing(role: TracingRole, logger?: Pick<Logger, 'warn'>): boolean {
  // process.env: the exporters and the batch processor read their own OTEL_* settings there.
  const { env } = process;
  if (provider) return true;
  if (isTrue(env.OTEL_SDK_DISABLED)) return false;
  const exporters = exportersOf(env);
  const sampling = exporters.on ? samplerOf(env) : undefined;
  for (const warning of [...exporters.warnings, ...(sampling?.warnings ?? [])]) {
    if (logger) logger.warn(warning);
    else process.stderr.write(`${warning}\n`);
  }
  if (!sampling) return false;
  const spanProcessors = exporters.names.map((name) => processorOf(name, env));
  const version = packageVersion();
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'agentplane',
    [ATTR_SERVICE_VERSION]: version,
    [ATTR_SERVICE_INSTANCE_ID]: randomUUID(),
    'agentplane.role': role,
  }).merge(detectResources({ detectors: [envDetector] }));
  provider = new NodeTracerProvider({ resource, sampler: sampling.sampler, spanProcessors });
  provider.register();
  setTracer(trace.getTracer(SCOPE, version), {
    captureMessageContent: isTrue(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
    recordTenant: isTrue(env.AGENTPLANE_OTEL_RECORD_TENANT),
  });
  return true;
}

const isTrue = (value: string | undefined) => value?.trim().toLowerCase() === 'true';

/** Exports the spans buffered so far (tests, before they read what an endpoint received). */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush();
}

/** Exports the spans still buffered and stops the SDK (the last step of a graceful shutdown). Safe to call twice. */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  if (!stopping) return;
  provider = undefined;
  setTracer(undefined);
  await stopping.shutdown();
  // The global provider, context manager and propagator go too: a later start registers its own.
  trace.disable();
  context.disable();
  propagation.disable();
}

/** The exporters agentplane has, as `OTEL_TRACES_EXPORTER` names them. */
type ExporterName = 'otlp' | 'console';
const EXPORTERS: readonly string[] = ['otlp', 'console', 'none'];

/**
 * What `OTEL_TRACES_EXPORTER` asks for: a comma-separated list of `otlp`, `console` and
 * `none`, in any case, each name once. A name agentplane does not have is ignored with a
 * warning (the specification's rule for a value not recognised); a list of such names only is
 * as if unset. `none` alone turns exporting off; beside other exporters it is a warning and
 * the default, otlp, alone (as the OpenTelemetry Node SDK does). Unset: otlp, when an OTLP
 * endpoint is set (`on`).
 */
function exportersOf(env: Env): { on: boolean; names: readonly ExporterName[]; warnings: readonly string[] } {
  // Each name once, in any case: lower-case name → the name as written first.
  const listed = new Map<string, string>();
  for (const name of (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((entry) => entry.trim()).filter(Boolean)) {
    if (!listed.has(name.toLowerCase())) listed.set(name.toLowerCase(), name);
  }
  const unknown = [...listed].filter(([name]) => !EXPORTERS.includes(name)).map(([, written]) => written);
  const known = [...listed.keys()].filter((name) => EXPORTERS.includes(name));
  const combined = known.includes('none') && known.length > 1;
  let names: ExporterName[];
  if (known.length === 0 || combined) names = ['otlp'];
  else names = known.filter((name): name is ExporterName => name !== 'none');
  const endpoint = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
  const on = names.length > 0 && (known.length > 0 || endpoint);
  const outcome = on
    ? `exporting with ${combined ? 'the default, otlp' : names.join(' and ')}`
    : `tracing stays off (${names.length === 0 ? 'none' : 'no OTLP endpoint is set'})`;
  const warnings: string[] = [];
  if (unknown.length > 0) {
    const quoted = unknown.map((name) => `"${name}"`).join(', ');
    const what = unknown.length === 1 ? 'is not an exporter' : 'are not exporters';
    warnings.push(`OTEL_TRACES_EXPORTER: ${quoted} ${what} agentplane has (otlp, console or none), ignored; ${outcome}`);
  }
  if (combined) warnings.push(`OTEL_TRACES_EXPORTER: "none" cannot be combined with other exporters ("${env.OTEL_TRACES_EXPORTER?.trim()}"); ${outcome}`);
  return { on, names, warnings };
}

/** The processor of one exporter: the console's prints each span as it ends, the OTLP exporter's sends batches. */
function processorOf(name: ExporterName, env: Env): SpanProcessor {
  if (name === 'console') return new SimpleSpanProcessor(new ConsoleSpanExporter());
  return new BatchSpanProcessor(otlpExporterOf(env));
}

function otlpExporterOf(env: Env): SpanExporter {
  const variable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[variable]?.trim() || 'http/protobuf';
  if (protocol === 'http/protobuf') return new OtlpProtobufExporter();
  if (protocol === 'http/json') return new OtlpJsonExporter();
  throw new ConfigError(variable, `"${protocol}" is not a protocol agentplane exports with: http/protobuf or http/json`);
}

const SAMPLERS: readonly string[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];
const DEFAULT_SAMPLER = 'parentbased_always_on';

/**
 * The sampler of `OTEL_TRACES_SAMPLER` (in any case; default parentbased_always_on) and, for
 * traceidratio and parentbased_traceidratio, `OTEL_TRACES_SAMPLER_ARG` (a probability from 0 to
 * 1; default 1.0). A sampler it does not have (jaeger_remote and xray among them) is the
 * default, an argument it cannot read is 1.0, each with a warning, as the specification says.
 * Built here rather than by the SDK, which says nothing of either without a diag logger.
 */
function samplerOf(env: Env): { sampler: Sampler; warnings: readonly string[] } {
  const warnings: string[] = [];
  const given = env.OTEL_TRACES_SAMPLER?.trim() ?? '';
  let name = given.toLowerCase() || DEFAULT_SAMPLER;
  if (!SAMPLERS.includes(name)) {
    const names = `${SAMPLERS.slice(0, -1).join(', ')} or ${SAMPLERS.at(-1)}`;
    warnings.push(`OTEL_TRACES_SAMPLER: "${given}" is not a sampler agentplane has (${names}); using the default, ${DEFAULT_SAMPLER}`);
    name = DEFAULT_SAMPLER;
  }
  const ratio = (): Sampler => {
    const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim() ?? '';
    const probability = Number(arg);
    if (arg && Number.isFinite(probability) && probability >= 0 && probability <= 1) return new TraceIdRatioBasedSampler(probability);
    if (arg) warnings.push(`OTEL_TRACES_SAMPLER_ARG: "${arg}" is not a probability from 0 to 1 (the argument of ${name}); using the default, 1.0`);
    return new TraceIdRatioBasedSampler(1);
  };
  const root = name.replace(/^parentbased_/, '');
  const sampler = root === 'always_on' ? new AlwaysOnSampler() : root === 'always_off' ? new AlwaysOffSampler() : ratio();
  return { sampler: name.startsWith('parentbased_') ? new ParentBasedSampler({ root: sampler }) : sampler, warnings };
}

/** The package's version (src/ under tsx, dist/src/ when built). */
function packageVersion(): string {
  const root = new URL(import.meta.url.endsWith('.ts') ? '../../' : '../../../', import.meta.url);
  return (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string }).version;
}
