import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
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

/**
 * Whether the `OTEL_*` variables ask for traces: not when `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`; yes when `OTEL_TRACES_EXPORTER` names an exporter or an OTLP
 * endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set.
 * Unconfigured, tracing is off: the SDK is never loaded into the hot path.
 */
export function tracingRequested(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the OpenTelemetry trace SDK of this process when the `OTEL_*` variables ask for it
 * ({@link tracingRequested}), before anything it instruments: a NodeTracerProvider (sampler from
 * `OTEL_TRACES_SAMPLER`/`_ARG`), a BatchSpanProcessor (`OTEL_BSP_*`), the OTLP exporter of
 * `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`/`OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the
 * default, or `http/json`; endpoint, headers, timeout and compression as the exporters read
 * them), W3C trace context and baggage, and a resource of `service.name` (agentplane),
 * `service.version`, `service.instance.id` and `agentplane.role` under what `OTEL_SERVICE_NAME`
 * and `OTEL_RESOURCE_ATTRIBUTES` say; message content on GenAI spans with
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the tenant on run spans with
 * `AGENTPLANE_OTEL_RECORD_TENANT=true`. Returns whether tracing is on; a second call does nothing.
 * An exporter or protocol it cannot serve is a ConfigError naming the variable.
 */
export function startTracing(role: TracingRole): boolean {
  // process.env: the exporters and the batch processor read their own OTEL_* settings there.
  const { env } = process;
  if (provider) return true;
  if (!tracingRequested(env)) return false;
  const version = packageVersion();
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'agentplane',
    [ATTR_SERVICE_VERSION]: version,
    [ATTR_SERVICE_INSTANCE_ID]: randomUUID(),
    'agentplane.role': role,
  }).merge(detectResources({ detectors: [envDetector] }));
  provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporterOf(env))] });
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

function exporterOf(env: Readonly<Record<string, string | undefined>>): SpanExporter {
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() || 'otlp';
  if (exporter === 'console') return new ConsoleSpanExporter();
  if (exporter !== 'otlp') throw new ConfigError('OTEL_TRACES_EXPORTER', `"${exporter}" is not an exporter agentplane has: otlp, console or none`);
  const variable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[variable]?.trim() || 'http/protobuf';
  if (protocol === 'http/protobuf') return new OtlpProtobufExporter();
  if (protocol === 'http/json') return new OtlpJsonExporter();
  throw new ConfigError(variable, `"${protocol}" is not a protocol agentplane exports with: http/protobuf or http/json`);
}

/** The package's version (src/ under tsx, dist/src/ when built). */
function packageVersion(): string {
  const root = new URL(import.meta.url.endsWith('.ts') ? '../../' : '../../../', import.meta.url);
  return (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string }).version;
}
