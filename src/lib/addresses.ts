/**
 * IP address classification for webhook targets (SSRF defence) and CIDR matching for the
 * operator's allow-list. Pure functions over bytes: no DNS, no sockets.
 *
 * Why bytes rather than string prefixes: the same address has many spellings (`::ffff:7f00:1`,
 * `::ffff:127.0.0.1`, `0:0:0:0:0:ffff:127.0.0.1`), and a string check that misses one is an SSRF.
 * Every input is parsed to 4 or 16 bytes first; IPv4-mapped IPv6 is judged as the IPv4 it carries.
 */

export interface Ip {
  family: 4 | 6;
  /** 4 bytes for IPv4, 16 for IPv6. */
  bytes: Uint8Array;
}

export interface Cidr extends Ip {
  prefix: number;
}

/**
 * Strict dotted-quad IPv4: four decimal parts 0-255 without leading zeros. Legacy forms
 * (`0x7f.1`, `2130706433`, `0177.0.0.1`) are not accepted here: the URL parser already
 * normalises them in hostnames, and DNS answers are always canonical, so anything else reaching
 * this function is not an address.
 */
function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

/** RFC 4291 text forms, including `::` compression and a dotted IPv4 tail. */
function parseIpv6(text: string): Uint8Array | null {
  if (text.length === 0 || text.length > 45) return null;
  let head = text;
  let tail: Uint8Array | null = null;
  // A trailing dotted quad fills the last 32 bits.
  const lastColon = text.lastIndexOf(":");
  if (lastColon >= 0 && text.includes(".", lastColon)) {
    tail = parseIpv4(text.slice(lastColon + 1));
    if (!tail) return null;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split("::");
  if (halves.length > 2) return null;
  const group = /^[0-9a-fA-F]{1,4}$/;
  const toGroups = (s: string): number[] | null => {
    if (s === "") return [];
    const gs = s.split(":");
    const out: number[] = [];
    for (const g of gs) {
      if (!group.test(g)) return null;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const left = toGroups(halves[0]!);
  const right = halves.length === 2 ? toGroups(halves[1]!) : [];
  if (!left || !right) return null;
  let groups: number[];
  if (halves.length === 2) {
    const missing = 8 - left.length - right.length;
    // "::" stands for at least one zero group.
    if (missing < 1) return null;
    groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  } else {
    groups = left;
  }
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

/**
 * Parses an IPv4 or IPv6 address. IPv6 may be bracketed (`[::1]`, as in URL hostnames) and may
 * carry a zone (`fe80::1%eth0`, as in some DNS answers); the zone does not change the verdict.
 * Returns null for anything that is not an address (then it is a host name).
 */
export function parseIp(text: string): Ip | null {
  let s = text;
  const bracketed = s.startsWith("[") && s.endsWith("]");
  if (bracketed) s = s.slice(1, -1);
  if (!bracketed) {
    const v4 = parseIpv4(s);
    if (v4) return { family: 4, bytes: v4 };
  }
  if (!s.includes(":")) return null;
  const zone = s.indexOf("%");
  if (zone >= 0) {
    if (zone === s.length - 1) return null;
    s = s.slice(0, zone);
  }
  const v6 = parseIpv6(s);
  return v6 ? { family: 6, bytes: v6 } : null;
}

/** True for ::ffff:0:0/96 (an IPv4 address seen through an IPv6 socket). */
function isV4Mapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

/** IPv4-mapped IPv6 becomes the IPv4 it carries; everything else is returned unchanged. */
export function normalizeIp(ip: Ip): Ip {
  if (ip.family === 6 && isV4Mapped(ip.bytes)) return { family: 4, bytes: ip.bytes.slice(12) };
  return ip;
}

/** Canonical text: dotted quad, or RFC 5952 compressed lower-case IPv6. */
export function formatIp(ip: Ip): string {
  if (ip.family === 4) return Array.from(ip.bytes).join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip.bytes[i]! << 8) | ip.bytes[i + 1]!);
  // Longest run of two or more zero groups is compressed (first one on a tie).
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLen).join(":")}`;
}

function prefixMatches(bytes: Uint8Array, net: Uint8Array, prefix: number): boolean {
  const full = prefix >> 3;
  for (let i = 0; i < full; i++) if (bytes[i] !== net[i]) return false;
  const rest = prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (bytes[full]! & mask) === (net[full]! & mask);
}

/** A named range that is not public, with whether an operator's allow-list may open it. */
interface SpecialRange {
  cidr: Cidr;
  label: string;
  /**
   * False for ranges nothing legitimate listens on (unspecified, multicast, broadcast): they stay
   * refused even if an allow-list entry covers them (e.g. an over-broad 0.0.0.0/0), because
   * connecting to 0.0.0.0 or :: reaches this very host.
   */
  allowable: boolean;
}

function range(text: string, label: string, allowable = true): SpecialRange {
  return { cidr: parseCidr(text), label, allowable };
}

// Order matters: the first match names the range in messages (narrow ranges before wide ones).
const V4_RANGES: SpecialRange[] = [
  range("255.255.255.255/32", "the broadcast address", false),
  range("0.0.0.0/8", "an unspecified ('this network') address", false),
  range("10.0.0.0/8", "a private address (RFC 1918)"),
  range("100.64.0.0/10", "a carrier-grade NAT address (RFC 6598)"),
  range("127.0.0.0/8", "a loopback address"),
  range("169.254.0.0/16", "a link-local address (cloud metadata lives here)"),
  range("172.16.0.0/12", "a private address (RFC 1918)"),
  range("192.0.0.0/24", "an IETF protocol assignment address"),
  range("192.0.2.0/24", "a documentation address"),
  range("192.88.99.0/24", "a deprecated 6to4 relay address"),
  range("192.168.0.0/16", "a private address (RFC 1918)"),
  range("198.18.0.0/15", "a benchmarking address"),
  range("198.51.100.0/24", "a documentation address"),
  range("203.0.113.0/24", "a documentation address"),
  range("224.0.0.0/4", "a multicast address", false),
  range("240.0.0.0/4", "a reserved address"),
];

const V6_RANGES: SpecialRange[] = [
  range("::/128", "the unspecified address", false),
  range("::1/128", "a loopback address"),
  // IPv4-compatible (deprecated): not routable; refused whole rather than judged by its tail.
  range("::/96", "a deprecated IPv4-compatible address"),
  range("64:ff9b::/96", "a NAT64 address (it can reach any IPv4, private ones included)"),
  range("64:ff9b:1::/48", "a local NAT64 address"),
  range("100::/64", "a discard-only address"),
  range("2001::/23", "an IETF protocol assignment address (Teredo and others)"),
  range("2001:db8::/32", "a documentation address"),
  range("fc00::/7", "a unique local address"),
  range("fe80::/10", "a link-local address"),
  range("fec0::/10", "a deprecated site-local address"),
  range("ff00::/8", "a multicast address", false),
];

const V6_GLOBAL_UNICAST = parseCidr("2000::/3");
const V6_6TO4 = parseCidr("2002::/16");

export interface Verdict {
  /** The normalised address (IPv4-mapped IPv6 becomes IPv4). */
  ip: Ip;
  /** True when the address is publicly routable. */
  public: boolean;
  /** For a non-public address: what it is, e.g. "a loopback address". */
  label?: string;
  /** For a non-public address: whether an allow-list entry may open it. */
  allowable: boolean;
}

/**
 * Judges an address. Public means globally routable unicast: every IPv4 outside the special
 * ranges above; for IPv6 only 2000::/3 (global unicast) outside its special ranges, and a 6to4
 * address (2002::/16) is judged by the IPv4 it embeds.
 */
export function classifyIp(input: Ip): Verdict {
  const ip = normalizeIp(input);
  if (ip.family === 4) {
    for (const r of V4_RANGES) {
      if (prefixMatches(ip.bytes, r.cidr.bytes, r.cidr.prefix)) {
        return { ip, public: false, label: r.label, allowable: r.allowable };
      }
    }
    return { ip, public: true, allowable: true };
  }
  for (const r of V6_RANGES) {
    if (prefixMatches(ip.bytes, r.cidr.bytes, r.cidr.prefix)) {
      return { ip, public: false, label: r.label, allowable: r.allowable };
    }
  }
  if (prefixMatches(ip.bytes, V6_6TO4.bytes, V6_6TO4.prefix)) {
    const inner = classifyIp({ family: 4, bytes: ip.bytes.slice(2, 6) });
    if (!inner.public) {
      return { ip, public: false, label: `a 6to4 address embedding ${inner.label}`, allowable: true };
    }
    return { ip, public: true, allowable: true };
  }
  if (!prefixMatches(ip.bytes, V6_GLOBAL_UNICAST.bytes, V6_GLOBAL_UNICAST.prefix)) {
    return { ip, public: false, label: "a reserved IPv6 address", allowable: true };
  }
  return { ip, public: true, allowable: true };
}

/** Convenience for text input; a non-address is never public. */
export function isPublicAddress(text: string): boolean {
  const ip = parseIp(text);
  return ip !== null && classifyIp(ip).public;
}

/**
 * Parses `a.b.c.d/n` or `x::y/n`; a bare address means a single host (/32 or /128). Host bits
 * must be zero (`10.0.0.1/8` is refused with a hint) so an entry means exactly what it says.
 * An IPv4-mapped IPv6 block (`::ffff:10.0.0.0/104`) is turned into its IPv4 block, because
 * addresses are normalised the same way before matching. Throws Error with a one-line reason.
 */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf("/");
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const ip = parseIp(addrText);
  if (!ip || addrText.startsWith("[") || addrText.includes("%")) {
    throw new Error(`"${text}" is not a CIDR block (expected e.g. 192.168.1.0/24 or fd00::/8)`);
  }
  const max = ip.family === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > max) {
      throw new Error(`"${text}": prefix length must be 0-${max}`);
    }
    prefix = Number(p);
  }
  for (let bit = prefix; bit < max; bit++) {
    if (ip.bytes[bit >> 3]! & (0x80 >> (bit & 7))) {
      const net = new Uint8Array(ip.bytes);
      for (let b = prefix; b < max; b++) net[b >> 3]! &= ~(0x80 >> (b & 7));
      throw new Error(
        `"${text}" has host bits set; did you mean ${formatIp({ family: ip.family, bytes: net })}/${prefix}?`,
      );
    }
  }
  if (ip.family === 6 && prefix >= 96 && isV4Mapped(ip.bytes)) {
    return { family: 4, bytes: ip.bytes.slice(12), prefix: prefix - 96 };
  }
  return { ...ip, prefix };
}

/** True when the (normalised) address lies inside the block; families never cross. */
export function cidrContains(cidr: Cidr, input: Ip): boolean {
  const ip = normalizeIp(input);
  return ip.family === cidr.family && prefixMatches(ip.bytes, cidr.bytes, cidr.prefix);
}

/** One X-Forwarded-For hop: an address, optionally bracketed and with a port (some proxies add one). */
function parseHop(text: string): Ip | null {
  if (text.length > 64) return null;
  let s = text;
  const bracketed = /^\[([^\]]+)\](?::[0-9]{1,5})?$/.exec(s);
  if (bracketed) s = bracketed[1]!;
  else if (/^[0-9.]+:[0-9]{1,5}$/.test(s)) s = s.slice(0, s.lastIndexOf(":"));
  const ip = parseIp(s);
  return ip && normalizeIp(ip);
}

/**
 * The client of a request that came from the socket's `peer` with the X-Forwarded-For header
 * `forwardedFor`. A peer outside `trusted` is the client, whatever the header says (anyone can send
 * one). From a trusted proxy the header's hops are walked from the right (the nearest) and the first
 * one outside `trusted` is the client: a client cannot hide behind entries it wrote itself, since
 * they sit to the left of the address its own proxy appended. A hop that is not an address ends the
 * walk at the last trusted hop (nothing further left of it can be believed); all hops trusted: the
 * leftmost. Canonical text (IPv4-mapped IPv6 as IPv4); null without a usable peer.
 */
export function resolveClientAddress(
  peer: string | null,
  forwardedFor: string | null,
  trusted: readonly Cidr[],
): string | null {
  const ip = peer === null ? null : parseIp(peer);
  if (!ip) return null;
  const isTrusted = (a: Ip) => trusted.some((c) => cidrContains(c, a));
  let client = normalizeIp(ip);
  if (forwardedFor && isTrusted(client)) {
    const hops = forwardedFor.split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseHop(hops[i]!.trim());
      if (!hop) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
  }
  return formatIp(client);
}
