import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { flushTracing } from '../../src/observability/tracing.js';
import { waitFor } from './wait.js';

/** A span as the receiver decoded it, ids in lower-case hex, attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  status: number;
  /** The attributes of the resource that exported it. */
  resource: Record<string, unknown>;
}

/** A local OTLP/HTTP trace endpoint (`POST /v1/traces`), decoding both encodings. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The Content-Type of each export request received. */
  contentTypes: string[];
  /** The headers of each export request received. */
  headers: IncomingMessage['headers'][];
  /** The path (and query) each export request was sent to. */
  paths: string[];
  close(): Promise<void>;
}

const PROTO_ROOT = fileURLToPath(new URL('./otlp/', import.meta.url));

/** The official OTLP message definitions (test/support/otlp), loaded with protobufjs. */
function exportRequestType(): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith('opentelemetry/') ? `${PROTO_ROOT}${target}` : target);
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
  return root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
}

/** Starts an OTLP/HTTP receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const type = exportRequestType();
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = req.headers['content-type'] ?? '';
      contentTypes.push(contentType);
      headers.push(req.headers);
      paths.push(req.url ?? '');
      const request = contentType.includes('json')
        ? (JSON.parse(body.toString('utf8')) as ExportRequest)
        : (type.toObject(type.decode(body), { longs: String, bytes: String, enums: Number, arrays: true }) as ExportRequest);
      spans.push(...flatten(request, contentType.includes('json') ? 'hex' : 'base64'));
      res.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' });
      res.end(contentType.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    headers,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Waits until `receiver` holds a span matching `match`, exporting the spans this process buffered (flushTracing) before each look. */
export function spanReceived(receiver: OtlpReceiver, what: string, match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
  return waitFor(what, async () => {
    await flushTracing();
    return receiver.spans.find(match);
  });
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}
interface WireSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number | string;
  attributes?: KeyValue[];
  events?: { name: string; attributes?: KeyValue[] }[];
  links?: { traceId: string; spanId: string; attributes?: KeyValue[] }[];
  status?: { code?: number | string };
}
interface ExportRequest {
  resourceSpans: { resource?: { attributes?: KeyValue[] }; scopeSpans: { spans: WireSpan[] }[] }[];
}

/** OTLP/JSON carries ids as hex; protobuf bytes come out of protobufjs as base64. */
function hexOf(id: string | undefined, encoding: 'hex' | 'base64'): string {
  if (!id) return '';
  return encoding === 'hex' ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

/** The one value an AnyValue holds (only set fields are decoded); int64 arrives as a string. */
function valueOf(value: Record<string, unknown>): unknown {
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.arrayValue ?? value.kvlistValue;
}

function attributesOf(attributes: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

const KINDS: Record<string, number> = { SPAN_KIND_INTERNAL: 1, SPAN_KIND_SERVER: 2, SPAN_KIND_CLIENT: 3, SPAN_KIND_PRODUCER: 4, SPAN_KIND_CONSUMER: 5 };

function flatten(request: ExportRequest, encoding: 'hex' | 'base64'): ReceivedSpan[] {
  return request.resourceSpans.flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return resourceSpans.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        traceId: hexOf(span.traceId, encoding),
        spanId: hexOf(span.spanId, encoding),
        parentSpanId: hexOf(span.parentSpanId, encoding),
        name: span.name,
        kind: typeof span.kind === 'string' ? (KINDS[span.kind] ?? 0) : span.kind,
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
        links: (span.links ?? []).map((link) => ({ traceId: hexOf(link.traceId, encoding), spanId: hexOf(link.spanId, encoding), attributes: attributesOf(link.attributes) })),
        status: Number(span.status?.code ?? 0),
        resource,
      })),
    );
  });
}
