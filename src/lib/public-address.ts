// The one rule for outbound connections to addresses a user chose (webhook endpoints, enrichment
// fetches): only public internet hosts, never a private, loopback, link-local, multicast,
// documentation or otherwise special address. The check runs in the connection's own DNS lookup,
// on every address the name resolves to, so a name that resolves to an internal address, or
// starts to between a check and the connection, is refused (docs/events.md §Delivery,
// docs/enrichment.md §The website provider).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// The blocks that IANA's special-purpose address registries mark not globally reachable, those
// deprecated blocks they no longer answer for (192.88.99.0/24, the 6to4 relays' anycast prefix,
// and 2001:10::/28, ORCHID), and the blocks not allocated for hosts (multicast, reserved)
// (docs/enrichment.md §The website provider). Of 2001::/23, IETF protocol assignments, the
// rows of Teredo, benchmarking and ORCHID, not its globally reachable services. 192.0.0.0/24 is
// refused whole, its two anycast services included: a webhook or a website is neither.
const SPECIAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  SPECIAL.addSubnet(net, prefix, 'ipv4');
// Besides the special ranges, the forms that carry an IPv4 address inside IPv6 without being
// judged as that address: IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), NAT64
// (the well-known prefix and the local-use one, RFC 8215), 6to4 and Teredo. No public endpoint
// needs them, and each can name a private IPv4 address. Documentation covers both of its prefixes
// (2001:db8::/32 and 3fff::/20, RFC 9637); segment routing's identifiers (5f00::/16, RFC 9602)
// name functions of routers, not hosts.
for (const [net, prefix] of [
  ['::', 96],
  ['::1', 128],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2001::', 32],
  ['2002::', 16],
  ['100::', 64],
  ['100:0:0:1::', 64],
  ['2001:2::', 48],
  ['2001:10::', 28],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  SPECIAL.addSubnet(net, prefix, 'ipv6');

/** Whether `address` is private, loopback, link-local or otherwise not a public internet host. */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return SPECIAL.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4 address carried in IPv6 (::ffff:a.b.c.d) is judged as itself.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return SPECIAL.check(mapped[1] as string, 'ipv4');
  return SPECIAL.check(address, 'ipv6');
}

/** A dns.lookup for http(s) requests that fails with `refuse(hostname, address)` on any special answer. */
export function publicLookup(refuse: (hostname: string, address: string) => Error): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const bad = addresses.find((a) => isSpecialAddress(a.address));
      if (bad || addresses.length === 0) return callback(refuse(hostname, bad?.address ?? 'nothing'), '', 0);
      if (options.all) return callback(null, addresses, 0);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
