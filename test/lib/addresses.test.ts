import { describe, expect, test } from "bun:test";
import {
  cidrContains,
  classifyIp,
  formatIp,
  isPublicAddress,
  normalizeIp,
  parseCidr,
  parseIp,
} from "../../src/lib/addresses.ts";

const ip = (text: string) => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`test bug: ${text} does not parse`);
  return parsed;
};

describe("parseIp and formatIp (happy)", () => {
  test.each([
    ["1.2.3.4", "1.2.3.4"],
    ["0.0.0.0", "0.0.0.0"],
    ["255.255.255.255", "255.255.255.255"],
    ["::", "::"],
    ["::1", "::1"],
    ["[::1]", "::1"],
    ["1::", "1::"],
    ["2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
    ["1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
    ["::ffff:1.2.3.4", "::ffff:102:304"],
    ["1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"],
  ])("%p formats as %p", (text, canonical) => {
    expect(formatIp(ip(text))).toBe(canonical);
  });

  test.each([
    ["::ffff:127.0.0.1", "127.0.0.1"],
    ["::ffff:7f00:1", "127.0.0.1"],
    ["0:0:0:0:0:ffff:7f00:0001", "127.0.0.1"],
    ["[::ffff:a9fe:a9fe]", "169.254.169.254"],
    ["::ffff:0.0.0.0", "0.0.0.0"],
  ])("IPv4-mapped %p normalises to %p", (text, v4) => {
    const n = normalizeIp(ip(text));
    expect(n.family).toBe(4);
    expect(formatIp(n)).toBe(v4);
  });

  test("normalising leaves other addresses alone", () => {
    expect(formatIp(normalizeIp(ip("::fffe:7f00:1")))).toBe("::fffe:7f00:1");
    expect(normalizeIp(ip("10.0.0.1")).family).toBe(4);
  });
});

describe("parseIp (not addresses)", () => {
  test.each([
    "",
    "localhost",
    "example.com",
    "1.2.3",
    "1.2.3.4.5",
    "256.0.0.1",
    "1.2.3.-1",
    " 1.2.3.4",
    // Legacy IPv4 spellings: the URL parser normalises them before we see a hostname.
    "01.2.3.4",
    "0x7f.0.0.1",
    "2130706433",
    "[1.2.3.4]",
    "::1::",
    ":1::",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7::8",
    "12345::",
    "g::1",
    "fe80::1%",
    "::ffff:1.2.3",
    "::ffff:1.2.3.4:5",
    "[::1",
  ])("%p is not an address", (text) => {
    expect(parseIp(text)).toBeNull();
    expect(isPublicAddress(text)).toBe(false);
  });
});

describe("classifyIp (security): every non-public range is refused", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "RFC 1918"],
    ["10.255.255.255", "RFC 1918"],
    ["172.16.0.0", "RFC 1918"],
    ["172.31.255.255", "RFC 1918"],
    ["192.168.1.1", "RFC 1918"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["100.64.0.1", "carrier-grade"],
    ["100.127.255.255", "carrier-grade"],
    ["169.254.169.254", "link-local"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["192.0.2.1", "documentation"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fc00::1", "unique local"],
    ["fd12:3456::1", "unique local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf:ffff::1", "link-local"],
    ["64:ff9b::7f00:1", "NAT64"],
    ["64:ff9b::8.8.8.8", "NAT64"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["0:0:0:0:0:ffff:7f00:0001", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["::ffff:10.0.0.1", "RFC 1918"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["::127.0.0.1", "IPv4-compatible"],
    ["2002:7f00:1::", "6to4 address embedding a loopback"],
    ["2002:c0a8:101::1", "6to4 address embedding a private"],
    ["2001:db8::1", "documentation"],
    ["2001::1", "IETF"],
    ["100::1", "discard"],
    ["fec0::1", "site-local"],
    ["4000::1", "reserved IPv6"],
  ])("%p is refused as %p", (text, label) => {
    const v = classifyIp(ip(text));
    expect(v.public).toBe(false);
    expect(v.label).toContain(label);
    expect(isPublicAddress(text)).toBe(false);
  });

  test.each(["0.0.0.0", "0.1.2.3", "255.255.255.255", "224.0.0.1", "::", "ff02::1", "::ffff:0.0.0.0"])(
    "%p can never be opened by an allow-list",
    (text) => {
      expect(classifyIp(ip(text)).allowable).toBe(false);
    },
  );

  test.each(["127.0.0.1", "10.0.0.1", "192.168.1.1", "169.254.169.254", "fd00::1", "::1"])(
    "%p can be opened by an allow-list",
    (text) => {
      expect(classifyIp(ip(text)).allowable).toBe(true);
    },
  );
});

describe("classifyIp (happy): public addresses, including range boundaries", () => {
  test.each([
    "8.8.8.8",
    "1.1.1.1",
    "11.0.0.0",
    "9.255.255.255",
    "172.15.255.255",
    "172.32.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "192.167.255.255",
    "192.169.0.0",
    "223.255.255.255",
    "126.255.255.255",
    "128.0.0.0",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "2a00:1450:4001::1",
    "::ffff:8.8.8.8",
    "::ffff:808:808",
    "2002:808:808::1",
  ])("%p is public", (text) => {
    expect(classifyIp(ip(text)).public).toBe(true);
    expect(isPublicAddress(text)).toBe(true);
  });
});

describe("parseCidr", () => {
  test.each([
    ["10.0.0.0/8", 4, "10.0.0.0", 8],
    ["192.168.1.0/24", 4, "192.168.1.0", 24],
    ["0.0.0.0/0", 4, "0.0.0.0", 0],
    ["10.1.2.3", 4, "10.1.2.3", 32],
    ["fd00::/8", 6, "fd00::", 8],
    ["::/0", 6, "::", 0],
    ["fe80::1", 6, "fe80::1", 128],
    // A mapped block means its IPv4 block, because addresses are normalised before matching.
    ["::ffff:10.0.0.0/104", 4, "10.0.0.0", 8],
  ])("%p parses", (text, family, address, prefix) => {
    const c = parseCidr(text);
    expect(c.family).toBe(family as 4 | 6);
    expect(formatIp(c)).toBe(address);
    expect(c.prefix).toBe(prefix);
  });

  test.each([
    ["10.0.0.1/8", /host bits set; did you mean 10\.0\.0\.0\/8\?/],
    ["fd00::1/8", /did you mean fd00::\/8\?/],
    ["10.0.0.0/33", /prefix length must be 0-32/],
    ["fd00::/129", /prefix length must be 0-128/],
    ["10.0.0.0/", /prefix length/],
    ["10.0.0.0/08", /prefix length/],
    ["10.0.0.0/-1", /prefix length/],
    ["10.0.0.0/8/8", /prefix length/],
    ["abc", /not a CIDR block/],
    ["", /not a CIDR block/],
    ["[fd00::]/8", /not a CIDR block/],
    ["fe80::%eth0/64", /not a CIDR block/],
    ["10.0.0/8", /not a CIDR block/],
  ])("%p is refused", (text, message) => {
    expect(() => parseCidr(text)).toThrow(message);
  });
});

describe("cidrContains", () => {
  test.each([
    ["10.0.0.0/8", "10.0.0.0", true],
    ["10.0.0.0/8", "10.255.255.255", true],
    ["10.0.0.0/8", "11.0.0.0", false],
    ["10.0.0.0/8", "9.255.255.255", false],
    ["172.16.0.0/12", "172.31.255.255", true],
    ["172.16.0.0/12", "172.32.0.0", false],
    ["192.168.1.0/24", "192.168.1.7", true],
    ["192.168.1.0/24", "192.168.2.7", false],
    ["192.168.1.0/24", "::ffff:192.168.1.7", true],
    ["192.168.1.0/24", "::ffff:c0a8:107", true],
    ["192.168.1.77", "192.168.1.77", true],
    ["192.168.1.77", "192.168.1.78", false],
    ["0.0.0.0/0", "203.0.113.9", true],
    ["0.0.0.0/0", "2001:db8::1", false],
    ["fd00::/8", "fd12::1", true],
    ["fd00::/8", "fc00::1", false],
    ["fd00::/8", "10.0.0.1", false],
    ["::/0", "10.0.0.1", false],
    ["::/0", "fe80::1", true],
    ["2001:db8::/33", "2001:db8:7fff::1", true],
    ["2001:db8::/33", "2001:db8:8000::1", false],
    ["::ffff:10.0.0.0/104", "10.9.9.9", true],
  ])("%p contains %p: %p", (cidr, addr, expected) => {
    expect(cidrContains(parseCidr(cidr), ip(addr))).toBe(expected);
  });
});
