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

/** The eight 16-bit groups of an IPv6 address (a zone `%eth0` dropped, a trailing dotted IPv4 read as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const before = head ? head.split(':') : [];
  const after = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - before.length - after.length).fill('0');
  return [...before, ...zeros, ...after].map((group) => Number.parseInt(group, 16));
}

const ipv4Of = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/**
 * The IPv4 address an IPv6 one carries, so that its IPv4 rule applies, else null: IPv4-mapped
 * (`::ffff:10.0.0.1`, `::ffff:a00:1`), IPv4-compatible (`::7f00:1`), IPv4-translated
 * (`::ffff:0:7f00:1`), NAT64 (`64:ff9b::/96`, and the local-use `64:ff9b:1::/48` read as a /96:
 * the IPv4 address in the last 32 bits), 6to4 (`2002:7f00:1::/48`) and Teredo (`2001::/32`, the
 * client's address inverted in the last 32 bits).
 */
function embeddedIPv4(address: string): string | null {
  const g = ipv6Groups(address);
  const zero = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zero(0, 5) && g[5] === 0xffff) return ipv4Of(g[6]!, g[7]!);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4Of(g[6]!, g[7]!);
  if (zero(0, 6) && (g[6] !== 0 || g[7]! > 1)) return ipv4Of(g[6]!, g[7]!); // `::` and `::1` are IPv6's own
  if (g[0] === 0x64 && g[1] === 0xff9b && (zero(2, 6) || g[2] === 1)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!);
  if (g[0] === 0x2001 && g[1] === 0) return ipv4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff);
  return null;
}

const refusedKind = (address: string, type: 'ipv4' | 'ipv6') =>
  address === '255.255.255.255' ? 'broadcast' : (blocked.find(({ list }) => list.check(address, type))?.kind ?? null);

/** The kind of address `address` is when webhooks may not go there (`loopback`, `private`, …), else null. */
export function refusedAddressKind(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 4) return refusedKind(address, 'ipv4');
  const ipv4 = embeddedIPv4(address);
  return refusedKind(address.replace(/%.*$/, ''), 'ipv6') ?? (ipv4 === null ? null : refusedKind(ipv4, 'ipv4'));
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
