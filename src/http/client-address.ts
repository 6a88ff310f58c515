import { isIP, type BlockList } from 'node:net';
import type { Context, Middleware } from 'koa';
import { addressList } from '../domain/address-list.js';

/** Strips the IPv4-mapped IPv6 form (`::ffff:10.0.0.1`) a dual-stack socket reports. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

function listed(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The client address of a request. Without SERVICE_TRUST_PROXY, the socket's peer. With it,
 * `X-Forwarded-For` counts only when the peer is one of the trusted proxies
 * (SERVICE_TRUSTED_PROXIES), and then only its last entry: the address that proxy saw and
 * appended (entries before it are whatever the client sent). An entry that is not an IP address
 * does not count (the peer does). A client that reaches the API directly, or sends garbage,
 * cannot choose its address.
 */
export function clientAddress(trustProxy: boolean, trusted: BlockList): (ctx: Context) => string {
  return (ctx) => {
    const peer = plain(ctx.req.socket.remoteAddress ?? '');
    if (!trustProxy || !listed(trusted, peer)) return peer;
    const header = ctx.get('X-Forwarded-For');
    if (header === '') return peer;
    const last = plain(header.slice(header.lastIndexOf(',') + 1).trim());
    return isIP(last) === 0 ? peer : last;
  };
}

/**
 * Sets `ctx.request.ip` to {@link clientAddress}'s answer, for the rate limiter and the logs:
 * X-Forwarded-For counts only from the trusted proxies, read from the right, since entries a
 * client wrote itself could be forged to dodge the limiter.
 */
export function clientAddressMiddleware(trustProxy: boolean, trustedProxies: readonly string[]): Middleware {
  const addressOf = clientAddress(trustProxy, addressList(trustedProxies));
  return async (ctx, next) => {
    ctx.request.ip = addressOf(ctx);
    await next();
  };
}
