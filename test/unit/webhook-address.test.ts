import { describe, expect, it } from 'vitest';
import { checkedAddresses, refusedAddressKind } from '../../src/runtime/webhook-address.js';

/**
 * IPv6 addresses that carry an IPv4 address (mapped, compatible, translated, NAT64, 6to4,
 * Teredo) are judged by the IPv4 address they carry: each form of 127.0.0.1, 10.0.0.1 and
 * 169.254.169.254 is refused, each form of a public address is not.
 */

/** Every IPv6 form of the IPv4 address `a.b.c.d`, as a webhook's host may resolve to it. */
function ipv6Forms(ipv4: string): Record<string, string> {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  const high = ((a << 8) | b).toString(16);
  const low = ((c << 8) | d).toString(16);
  const teredoHigh = (0xffff ^ ((a << 8) | b)).toString(16);
  const teredoLow = (0xffff ^ ((c << 8) | d)).toString(16);
  return {
    'mapped, dotted': `::ffff:${ipv4}`,
    'mapped, hex': `::ffff:${high}:${low}`,
    'mapped, long form': `0:0:0:0:0:ffff:${high}:${low}`,
    'mapped, upper case': `::FFFF:${high.toUpperCase()}:${low.toUpperCase()}`,
    'compatible, dotted': `::${ipv4}`,
    'compatible, hex': `::${high}:${low}`,
    'translated, dotted': `::ffff:0:${ipv4}`,
    'translated, hex': `::ffff:0:${high}:${low}`,
    'NAT64 well-known prefix': `64:ff9b::${high}:${low}`,
    'NAT64 well-known prefix, dotted': `64:ff9b::${ipv4}`,
    'NAT64 local-use prefix': `64:ff9b:1::${high}:${low}`,
    'NAT64 local-use prefix, a subnet of it': `64:ff9b:1:abcd:0:0:${high}:${low}`,
    '6to4': `2002:${high}:${low}::1`,
    '6to4, a subnet and host': `2002:${high}:${low}:5:6:7:8:9`,
    Teredo: `2001:0:4136:e378:8000:63bf:${teredoHigh}:${teredoLow}`,
  };
}

describe('webhook addresses: IPv4 inside IPv6', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.1.2.3', 'loopback'],
    ['10.0.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
  ])('refuses every IPv6 form of %s as %s', (ipv4, kind) => {
    const kinds = Object.fromEntries(Object.entries(ipv6Forms(ipv4)).map(([form, address]) => [`${form}: ${address}`, refusedAddressKind(address)]));
    expect(kinds).toEqual(Object.fromEntries(Object.keys(kinds).map((form) => [form, kind])));
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1'])('allows every IPv6 form of the public %s', (ipv4) => {
    const kinds = Object.fromEntries(Object.entries(ipv6Forms(ipv4)).map(([form, address]) => [`${form}: ${address}`, refusedAddressKind(address)]));
    expect(kinds).toEqual(Object.fromEntries(Object.keys(kinds).map((form) => [form, null])));
  });

  it('keeps the IPv6 rules for what carries no IPv4 address', () => {
    expect(refusedAddressKind('::1')).toBe('loopback');
    expect(refusedAddressKind('::')).toBe('unspecified');
    expect(refusedAddressKind('0:0:0:0:0:0:0:1')).toBe('loopback');
    expect(refusedAddressKind('fe80::1%eth0')).toBe('link-local');
    expect(refusedAddressKind('fd00::7f00:1')).toBe('unique local');
    expect(refusedAddressKind('2606:4700::1111')).toBeNull();
    expect(refusedAddressKind('2001:db8::7f00:1')).toBeNull();
  });

  it('refuses a host that resolves to an IPv6 form of loopback, and an IPv6 literal one', async () => {
    await expect(checkedAddresses('nat64.invalid', false, async () => [{ address: '64:ff9b::7f00:1', family: 6 }])).rejects.toThrow(
      /nat64\.invalid resolves to 64:ff9b::7f00:1, which is loopback/,
    );
    await expect(checkedAddresses('[2002:a00:1::1]', false)).rejects.toThrow(/2002:a00:1::1 is private/);
    await expect(checkedAddresses('[::7f00:1]', true)).resolves.toEqual([{ address: '::7f00:1', family: 6 }]);
  });
});
