/**
 * resolveClientAddress: which address a request came from, given the socket's peer, its
 * X-Forwarded-For header and the operator's `[server] trusted_proxies` (issue 31).
 */
import { describe, expect, test } from "bun:test";
import { parseCidr, resolveClientAddress } from "../../src/lib/addresses.ts";

const proxies = ["10.0.0.0/8", "fd00::/8"].map(parseCidr);

describe("resolveClientAddress", () => {
  test("no trusted proxy: the peer, whatever the header says", () => {
    expect(resolveClientAddress("203.0.113.5", null, [])).toBe("203.0.113.5");
    expect(resolveClientAddress("203.0.113.5", "198.51.100.1", [])).toBe("203.0.113.5");
    expect(resolveClientAddress("10.0.0.2", "198.51.100.1", [])).toBe("10.0.0.2");
  });

  test("a forged header from an untrusted peer is ignored", () => {
    expect(resolveClientAddress("203.0.113.5", "10.0.0.9, 198.51.100.1", proxies)).toBe("203.0.113.5");
  });

  test("from a trusted proxy: the rightmost hop that is not a trusted proxy", () => {
    expect(resolveClientAddress("10.0.0.2", "198.51.100.1", proxies)).toBe("198.51.100.1");
    // The client wrote "1.1.1.1" itself; its proxy appended the address it really came from.
    expect(resolveClientAddress("10.0.0.2", "1.1.1.1, 198.51.100.1", proxies)).toBe("198.51.100.1");
    // Two trusted proxies in a row are walked past.
    expect(resolveClientAddress("10.0.0.2", "1.1.1.1, 198.51.100.1, 10.0.0.7", proxies)).toBe("198.51.100.1");
    // Two headers are one list (Headers.get joins them with ", ").
    expect(resolveClientAddress("10.0.0.2", "198.51.100.1,10.0.0.7", proxies)).toBe("198.51.100.1");
  });

  test("spellings: ports, brackets, IPv6, IPv4-mapped peers", () => {
    expect(resolveClientAddress("10.0.0.2", "198.51.100.1:4711", proxies)).toBe("198.51.100.1");
    expect(resolveClientAddress("10.0.0.2", "[2001:DB8::1]:443", proxies)).toBe("2001:db8::1");
    expect(resolveClientAddress("fd00::2", "2001:db8::1", proxies)).toBe("2001:db8::1");
    expect(resolveClientAddress("::ffff:10.0.0.2", "198.51.100.1", proxies)).toBe("198.51.100.1");
    expect(resolveClientAddress("::ffff:203.0.113.5", null, proxies)).toBe("203.0.113.5");
  });

  test("a hop that is not an address stops the walk at the last trusted hop", () => {
    expect(resolveClientAddress("10.0.0.2", "198.51.100.1, unknown", proxies)).toBe("10.0.0.2");
    expect(resolveClientAddress("10.0.0.2", "198.51.100.1, 10.0.0.7, garbage", proxies)).toBe("10.0.0.2");
    expect(resolveClientAddress("10.0.0.2", "garbage, 10.0.0.7", proxies)).toBe("10.0.0.7");
    expect(resolveClientAddress("10.0.0.2", "", proxies)).toBe("10.0.0.2");
    expect(resolveClientAddress("10.0.0.2", "x".repeat(10_000), proxies)).toBe("10.0.0.2");
  });

  test("every hop trusted: the leftmost; no peer: null", () => {
    expect(resolveClientAddress("10.0.0.2", "10.0.0.8, 10.0.0.7", proxies)).toBe("10.0.0.8");
    expect(resolveClientAddress(null, "198.51.100.1", proxies)).toBeNull();
    expect(resolveClientAddress("not an address", null, proxies)).toBeNull();
  });
});
