import { isIP } from 'node:net';

/**
 * Why an address is no place to send a webhook (decisions.md, "Webhooks (turn 5)", Safety): a webhook URL is typed
 * by an organization's admin, so without this rule it would let anyone with that role make the service call its own
 * loopback, the cloud's metadata endpoint (credentials) or the private network it runs in.
 */
export type ForbiddenRange =
  'metadata' | 'unspecified' | 'loopback' | 'private' | 'shared' | 'link-local' | 'unique-local' | 'multicast' | 'reserved';

interface Cidr {
  range: ForbiddenRange;
  prefix: Uint8Array;
  bits: number;
}

function cidr(range: ForbiddenRange, text: string): Cidr {
  const [address, bits] = text.split('/');
  const prefix = isIP(address) === 4 ? parseIPv4(address) : parseIPv6(address);
  return { range, prefix, bits: Number(bits) };
}

// First match wins: the metadata addresses come before the link-local and shared ranges that hold them.
// Documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32) are left public on purpose: nothing
// on the internet answers there, so they reach nothing, and tests use them as stand-ins for public addresses.
const IPV4_RANGES: Cidr[] = [
  cidr('metadata', '169.254.169.254/32'), // AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack
  cidr('metadata', '100.100.100.200/32'), // Alibaba Cloud
  cidr('metadata', '168.63.129.16/32'), // Azure's WireServer: a public-looking address every Azure VM reaches
  cidr('unspecified', '0.0.0.0/8'),
  cidr('loopback', '127.0.0.0/8'),
  cidr('private', '10.0.0.0/8'),
  cidr('private', '172.16.0.0/12'),
  cidr('private', '192.168.0.0/16'),
  cidr('shared', '100.64.0.0/10'), // RFC 6598, carrier-grade NAT: inside a provider's network
  cidr('link-local', '169.254.0.0/16'),
  cidr('reserved', '192.0.0.0/24'), // RFC 6890 protocol assignments (DS-Lite, NAT64 discovery): never global
  cidr('reserved', '198.18.0.0/15'), // benchmarking: used inside networks, never routed on the internet
  cidr('multicast', '224.0.0.0/4'),
  cidr('reserved', '240.0.0.0/4'), // includes the broadcast address 255.255.255.255
];

// :: and ::1 sit inside the IPv4-compatible prefix below, but are IPv6's own unspecified and loopback addresses.
const IPV6_OWN_ADDRESSES: Cidr[] = [cidr('unspecified', '::/128'), cidr('loopback', '::1/128')];

const IPV6_RANGES: Cidr[] = [
  cidr('metadata', 'fd00:ec2::254/128'), // AWS's IPv6 metadata endpoint, inside unique-local
  cidr('private', '64:ff9b:1::/48'), // RFC 8215 local-use NAT64: translates into the operator's own network
  cidr('link-local', 'fe80::/10'),
  cidr('private', 'fec0::/10'), // deprecated site-local: IPv6's first private range, still honoured by some stacks
  cidr('unique-local', 'fc00::/7'),
  cidr('multicast', 'ff00::/8'),
  cidr('reserved', '100::/64'), // discard-only
  cidr('reserved', '2001:2::/48'), // benchmarking, as 198.18/15
];

// Global unicast is allocated only from 2000::/3; whatever else is left after the table is not on the internet.
const IPV6_GLOBAL_UNICAST = cidr('reserved', '2000::/3');

/**
 * IPv6 prefixes whose addresses carry an IPv4 address that the packet really goes to (or pretends to): each is
 * judged by that IPv4 address, so `::ffff:127.0.0.1` is loopback and `64:ff9b::a00:1` (NAT64 to 10.0.0.1) private.
 */
const EMBEDDED_IPV4: { prefix: Cidr; offset: number }[] = [
  { prefix: cidr('reserved', '::ffff:0:0/96'), offset: 12 }, // IPv4-mapped
  { prefix: cidr('reserved', '::ffff:0:0:0/96'), offset: 12 }, // SIIT IPv4-translated (RFC 2765)
  { prefix: cidr('reserved', '::/96'), offset: 12 }, // IPv4-compatible (deprecated)
  { prefix: cidr('reserved', '64:ff9b::/96'), offset: 12 }, // NAT64 well-known prefix
  { prefix: cidr('reserved', '2002::/16'), offset: 2 }, // 6to4
];

/**
 * The range that makes `address` (IPv4 or IPv6 text, as DNS or a socket gives it) unsafe for a webhook, or null
 * for a public address. Throws on text that is not an IP address: a caller with a host name must resolve it first.
 */
export function forbiddenRange(address: string): ForbiddenRange | null {
  switch (isIP(address)) {
    case 4:
      return ipv4Range(parseIPv4(address));
    case 6:
      return ipv6Range(parseIPv6(address));
    default:
      throw new TypeError(`not an IP address: ${JSON.stringify(address)}`);
  }
}

function ipv4Range(bytes: Uint8Array): ForbiddenRange | null {
  return IPV4_RANGES.find((entry) => matches(bytes, entry))?.range ?? null;
}

function ipv6Range(bytes: Uint8Array): ForbiddenRange | null {
  const own = IPV6_OWN_ADDRESSES.find((entry) => matches(bytes, entry));
  if (own) return own.range;
  const embedding = EMBEDDED_IPV4.find(({ prefix }) => matches(bytes, prefix));
  if (embedding) return ipv4Range(bytes.subarray(embedding.offset, embedding.offset + 4));
  const listed = IPV6_RANGES.find((entry) => matches(bytes, entry));
  if (listed) return listed.range;
  return matches(bytes, IPV6_GLOBAL_UNICAST) ? null : 'reserved';
}

function matches(bytes: Uint8Array, { prefix, bits }: Cidr): boolean {
  if (bytes.length !== prefix.length) return false;
  const whole = bits >> 3;
  for (let i = 0; i < whole; i++) if (bytes[i] !== prefix[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (bytes[whole] & mask) === (prefix[whole] & mask);
}

/** Dotted-quad text already accepted by `isIP` (which refuses leading zeros and other spellings). */
function parseIPv4(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

/** IPv6 text already accepted by `isIP`: hex groups, at most one `::`, an optional dotted tail and zone. */
function parseIPv6(text: string): Uint8Array {
  let address = text.split('%')[0];
  const lastColon = address.lastIndexOf(':');
  if (address.includes('.', lastColon)) {
    const v4 = parseIPv4(address.slice(lastColon + 1));
    address = `${address.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const hex = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const halves = address.split('::');
  const head = hex(halves[0]);
  const back = hex(halves[1] ?? '');
  const groups = [...head, ...new Array<number>(8 - head.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}
