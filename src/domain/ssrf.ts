/**
 * Which addresses a live project's webhook (or return URL) may not point at: anything that is
 * not a public unicast address, so a merchant cannot make the service call into its own
 * network (SSRF). IPv4 and IPv6, with IPv4 addresses embedded in IPv6 (mapped ::ffff:,
 * compatible ::a.b.c.d) classed as the IPv4 address, and every block of the IANA IPv4 and IPv6
 * Special-Purpose Address Registries refused, including the translation and tunnelling ones
 * that reach an IPv4 address through a gateway: NAT64 (64:ff9b::/96, 64:ff9b:1::/48), Teredo
 * (2001::/32) and 6to4 (2002::/16).
 */
export type AddressClass =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'unique-local'
  | 'site-local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'translation';

/** Parses a dotted-quad IPv4 address to 4 bytes; undefined for anything else. */
export function parseIPv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = parts.map((p) => (/^(0|[1-9][0-9]{0,2})$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : undefined;
}

/** Parses an IPv6 address (with ::, an embedded dotted quad, brackets or a %zone) to 8 groups. */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) return undefined;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    // an embedded dotted quad (::ffff:127.0.0.1) is the last two groups
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (!v4) return undefined;
    s = s.slice(0, lastColon + 1) + ((v4[0] << 8) | v4[1]).toString(16) + ':' + ((v4[2] << 8) | v4[3]).toString(16);
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const group = (g: string) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : NaN);
  const head = halves[0] ? halves[0].split(':').map(group) : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':').map(group) : [];
  if ([...head, ...rest].some(Number.isNaN)) return undefined;
  const given = head.length + rest.length;
  if (halves.length === 1) return given === 8 ? head : undefined;
  if (given > 7) return undefined;
  return [...head, ...new Array(8 - given).fill(0), ...rest];
}

function classifyIPv4([a, b, c]: number[]): AddressClass | undefined {
  if (a === 0) return 'unspecified'; // 0.0.0.0/8 "this network"
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'shared'; // carrier-grade NAT 100.64.0.0/10
  if (a === 169 && b === 254) return 'link-local'; // includes cloud metadata 169.254.169.254
  if (a === 192 && b === 0 && c === 0) return 'reserved'; // IETF protocol assignments
  if (a === 192 && b === 88 && c === 99) return 'translation'; // 6to4 relay anycast (deprecated)
  // AS112 (192.31.196.0/24, 192.175.48.0/24) and AMT (192.52.193.0/24): special-purpose anycast
  if ((a === 192 && b === 31 && c === 196) || (a === 192 && b === 175 && c === 48) || (a === 192 && b === 52 && c === 193))
    return 'reserved';
  if ((a === 192 && b === 0 && c === 2) || (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113))
    return 'documentation';
  if (a === 198 && (b === 18 || b === 19)) return 'reserved'; // benchmarking
  if (a >= 224 && a <= 239) return 'multicast';
  if (a === 255 && b === 255 && c === 255) return 'broadcast';
  if (a >= 240) return 'reserved';
  return undefined;
}

const v4Of = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255];

function classifyIPv6(g: number[]): AddressClass | undefined {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  if (zeros(0, 5) && g[5] === 0xffff) return classifyIPv4(v4Of(g[6], g[7])); // mapped ::ffff:a.b.c.d
  if (zeros(0, 6)) return classifyIPv4(v4Of(g[6], g[7])) ?? 'reserved'; // deprecated ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && (zeros(2, 6) || g[2] === 1)) return 'translation'; // NAT64 /96 and local-use /48
  if (g[0] === 0x2002) return 'translation'; // 6to4
  if (g[0] === 0x2001 && g[1] === 0) return 'translation'; // Teredo 2001::/32
  if (g[0] === 0x2001 && g[1] < 0x200) return 'reserved'; // the rest of IETF protocol assignments 2001::/23
  if (g[0] === 0x2620 && g[1] === 0x4f && g[2] === 0x8000) return 'reserved'; // AS112-v6
  if ((g[0] & 0xfff0) === 0x3ff0) return 'documentation'; // 3fff::/20
  if (g[0] === 0x5f00) return 'reserved'; // SRv6 SIDs
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0] & 0xffc0) === 0xfec0) return 'site-local';
  if ((g[0] & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x100 && zeros(1, 3) && (g[3] === 0 || g[3] === 1)) return 'reserved'; // discard-only 100::/64, dummy 100:0:0:1::/64
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'documentation';
  if (g[0] === 0) return 'reserved'; // the rest of ::/8
  return undefined;
}

/** Why an IP address is not a public unicast address, or undefined when it is one. Not an IP: undefined. */
export function addressClass(ip: string): AddressClass | undefined {
  const v4 = parseIPv4(ip);
  if (v4) return classifyIPv4(v4);
  const v6 = parseIPv6(ip);
  return v6 ? classifyIPv6(v6) : undefined;
}

/** True for loopback, private, link-local, unique-local, unspecified, multicast and reserved addresses. */
export const isForbiddenAddress = (ip: string) => addressClass(ip) !== undefined;

export const isIpLiteral = (host: string) => parseIPv4(host) !== undefined || parseIPv6(host) !== undefined;

/** Names that always mean this machine (RFC 6761), refused without asking DNS. */
export const isLocalName = (host: string) => {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === 'localhost.localdomain';
};
