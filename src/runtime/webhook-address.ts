import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where run webhooks may not go unless SERVICE_WEBHOOK_ALLOW_PRIVATE is set: this host
 * (loopback, unspecified), the links and networks it sits on (link-local, RFC 1918, CGNAT, ULA),
 * which hold cloud metadata services and internal APIs a client of the API must not reach
 * through us, and what is no unicast destination (multicast, reserved, broadcast).
 */
const REFUSED: readonly (readonly [cidr: string, kind: string])[] = [
  ['0.0.0.0/8', 'unspecified'],
  ['127.0.0.0/8', 'loopback'],
  ['10.0.0.0/8', 'private'],
  ['172.16.0.0/12', 'private'],
  ['192.168.0.0/16', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['169.254.0.0/16', 'link-local'],
  ['192.0.0.0/24', 'reserved'],
  ['198.18.0.0/15', 'reserved'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['fc00::/7', 'unique local'],
  ['ff00::/8', 'multicast'],
];

const blocked = REFUSED.map(([cidr, kind]) => {
  const [network, prefix] = cidr.split('/') as [string, string];
  const list = new BlockList();
  list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  return { list, kind };
});

/** An IPv4 address written as IPv6 (`::ffff:10.0.0.1`, `::ffff:a00:1`) as IPv4, so its IPv4 rule applies. */
function unmapped(address: string): string {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1]!;
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return address;
  const high = Number.parseInt(hex[1]!, 16);
  const low = Number.parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** The kind of address `address` is when webhooks may not go there (`loopback`, `private`, …), else null. */
export function refusedAddressKind(address: string): string | null {
  const plain = unmapped(address);
  const family = isIP(plain);
  if (family === 0) return 'not an IP address';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (plain === '255.255.255.255') return 'broadcast';
  return blocked.find(({ list }) => list.check(plain, type))?.kind ?? null;
}

/** A webhook's host resolved to an address it may not go to: the delivery is refused for good. */
export class WebhookAddressRefused extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly kind: string,
  ) {
    super(`${address === host ? host : `${host} resolves to ${address}, which`} is ${kind}; SERVICE_WEBHOOK_ALLOW_PRIVATE=true allows it`);
    this.name = 'WebhookAddressRefused';
  }
}

/** Resolves a host name to every address it has (node's `dns.lookup`, as connections do). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export const resolveWithDns: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/**
 * The addresses a webhook to `hostname` (a URL's, IPv6 in brackets) connects to, checked now:
 * the delivery connects to these and resolves nothing again, so a name that changes its answer
 * after the check (DNS rebinding) cannot move it. Throws {@link WebhookAddressRefused} when any
 * of them is refused (unless `allowPrivate`), or the resolver's error.
 */
export async function checkedAddresses(hostname: string, allowPrivate: boolean, resolve: ResolveHost = resolveWithDns): Promise<LookupAddress[]> {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const family = isIP(host);
  const addresses = family === 0 ? await resolve(host) : [{ address: host, family }];
  if (allowPrivate) return addresses;
  for (const { address } of addresses) {
    const kind = refusedAddressKind(address);
    if (kind) throw new WebhookAddressRefused(host, address, kind);
  }
  return addresses;
}
