import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_URL_FULL } from '@opentelemetry/semantic-conventions';
import { failSpan, tracer } from '../observability/tracer.js';

/** One POST of a webhook body. */
export interface WebhookPost {
  url: URL;
  body: Buffer;
  headers: Record<string, string>;
  /** Where to connect: the host's addresses as checked ({@link checkedAddresses}); nothing is resolved again. */
  addresses: readonly LookupAddress[];
  /** Upper bound of the attempt, connection to the answer's status. */
  timeoutMs: number;
}

/**
 * POSTs the body and resolves with the answer's status as soon as it comes; redirects are not
 * followed (a 3xx is an answer like any other, so a receiver cannot send the delivery on to an
 * address never checked). Rejects on a network failure or a timeout before the status. With
 * tracing on, the POST is a client span (`POST`, the URL without its query) of the active trace
 * and sends its `traceparent`/`tracestate`.
 */
export function postWebhook(post: WebhookPost): Promise<number> {
  const traces = tracer();
  if (!traces) return send(post);
  const url = `${post.url.origin}${post.url.pathname}`;
  const attributes = { [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_URL_FULL]: url, [ATTR_SERVER_ADDRESS]: post.url.hostname };
  return traces.startActiveSpan('POST', { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const headers: Record<string, string> = { ...post.headers };
    propagation.inject(context.active(), headers);
    try {
      const status = await send({ ...post, headers });
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', String(status));
      return status;
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

function send(post: WebhookPost): Promise<number> {
  const request = post.url.protocol === 'https:' ? httpsRequest : httpRequest;
  const options: RequestOptions = {
    method: 'POST',
    headers: { ...post.headers, 'content-length': String(post.body.length) },
    lookup: pinnedLookup(post.addresses),
    signal: AbortSignal.timeout(post.timeoutMs),
    // A fresh connection per attempt: a pooled one may lead to an address checked for another URL.
    agent: false,
  };
  return new Promise((resolve, reject) => {
    const outgoing = request(post.url, options, (response) => {
      // The status is the answer: the body means nothing to us, and a receiver's endless or
      // huge body must neither hold the slot nor turn a delivery into a timeout (and a retry).
      resolve(response.statusCode ?? 0);
      response.destroy();
    });
    outgoing.on('error', reject);
    outgoing.end(post.body);
  });
}

/** A `lookup` that answers the addresses given, as a connection asks (one, or all of them). */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (wanted.length === 0) {
      callback(Object.assign(new Error(`no IPv${options.family} address`), { code: 'ENOTFOUND' }), '');
      return;
    }
    if (options.all) callback(null, [...wanted]);
    else callback(null, wanted[0]!.address, wanted[0]!.family);
  };
}
