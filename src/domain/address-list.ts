import { BlockList, isIP } from 'node:net';

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
