import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

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
 * address never checked). Rejects on a network failure or a timeout before the status.
 */
export function postWebhook(post: WebhookPost): Promise<number> {
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
