import { BlockList, isIP } from 'node:net';
import type { Context, Middleware } from 'koa';

/** Strips the IPv4-mapped IPv6 form (`::ffff:10.0.0.1`) a dual-stack socket reports. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/** A BlockList of the addresses and CIDRs given (`10.0.0.0/8`, `::1`, `fd00::/8`). Throws for a bad entry. */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    if (family === 0) throw new Error(`"${entry}" is not an IP address or CIDR`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else {
      const bits = Number(prefix);
      if (!/^\d+$/.test(prefix) || bits > (family === 4 ? 32 : 128)) throw new Error(`"${entry}" has a bad prefix length`);
      list.addSubnet(address, bits, type);
    }
  }
  return list;
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
