/** `[server] trusted_proxies` (issue 31): parsed at load, refused with the entry named when wrong. */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, liveSettingsFrom, readConfigFile } from "../../src/config/load.ts";
import { formatIp } from "../../src/lib/addresses.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir();
let n = 0;
const write = (text: string) => {
  const p = join(dir, `gengate-${n++}.toml`);
  writeFileSync(p, text);
  return p;
};

describe("config: server.trusted_proxies", () => {
  test("absent: no proxy is trusted", () => {
    expect(liveSettingsFrom(readConfigFile(write("[limits]\nin_flight = 3\n"))).trustedProxies).toEqual([]);
    expect(liveSettingsFrom(null).trustedProxies).toEqual([]);
  });

  test("IPv4 and IPv6 blocks and single addresses reach the live settings", () => {
    const p = write('[server]\ntrusted_proxies = ["10.0.0.0/8", "fd00::/8", "127.0.0.1"]\n');
    const proxies = liveSettingsFrom(readConfigFile(p)).trustedProxies;
    expect(proxies.map((c) => `${formatIp(c)}/${c.prefix}`)).toEqual([
      "10.0.0.0/8",
      "fd00::/8",
      "127.0.0.1/32",
    ]);
  });

  test.each([
    ['["10.0.0.1/8"]', /server\.trusted_proxies\[0\]: .*host bits set; did you mean 10\.0\.0\.0\/8/],
    ['["127.0.0.1", "proxy.local"]', /server\.trusted_proxies\[1\]: .*not a CIDR block/],
    ['"10.0.0.0/8"', /server\.trusted_proxies/],
  ])("%s is refused, naming the entry", (list, message) => {
    const p = write(`[server]\ntrusted_proxies = ${list}\n`);
    let msg = "";
    try {
      readConfigFile(p);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      msg = (err as Error).message;
    }
    expect(msg).toMatch(message);
    expect(msg).toContain(p);
  });
});
