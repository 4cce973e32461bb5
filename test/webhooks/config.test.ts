import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { ConfigError, liveSettingsFrom, readConfigFile } from "../../src/config/load.ts";
import { tempFile } from "./helpers.ts";

const write = (text: string) => {
  const p = tempFile("gengate.toml");
  writeFileSync(p, text);
  return p;
};

function configError(path: string): string {
  try {
    readConfigFile(path);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("config: webhooks.allow_private_cidrs", () => {
  test("absent: nothing private is allowed", () => {
    expect(liveSettingsFrom(readConfigFile(write("[limits]\nin_flight = 3\n"))).webhooks).toEqual({
      allowPrivateCidrs: [],
    });
    expect(liveSettingsFrom(null).webhooks).toEqual({ allowPrivateCidrs: [] });
  });

  test("listed IPv4 and IPv6 blocks reach the live settings", () => {
    const p = write('[webhooks]\nallow_private_cidrs = ["192.168.1.0/24", "fd00::/8", "10.0.0.7"]\n');
    expect(liveSettingsFrom(readConfigFile(p)).webhooks.allowPrivateCidrs).toEqual([
      "192.168.1.0/24",
      "fd00::/8",
      "10.0.0.7",
    ]);
  });

  test.each([
    [
      '["192.168.1.0/24", "192.168.1.1/24"]',
      /webhooks\.allow_private_cidrs\[1\]: .*host bits set; did you mean 192\.168\.1\.0\/24/,
    ],
    ['["10.0.0.0/40"]', /webhooks\.allow_private_cidrs\[0\]: .*prefix length must be 0-32/],
    ['["nas.local"]', /webhooks\.allow_private_cidrs\[0\]: .*not a CIDR block/],
  ])("%s is refused, naming the entry", (list, message) => {
    const p = write(`[webhooks]\nallow_private_cidrs = ${list}\n`);
    const msg = configError(p);
    expect(msg).toMatch(message);
    expect(msg).toContain(p);
  });

  test("unknown keys and wrong types in [webhooks] are refused", () => {
    expect(configError(write('[webhooks]\nallow_private = ["10.0.0.0/8"]\n'))).toMatch(
      /webhooks\.allow_private.*unknown key/,
    );
    expect(configError(write('[webhooks]\nallow_private_cidrs = "10.0.0.0/8"\n'))).toMatch(
      /webhooks\.allow_private_cidrs/,
    );
  });
});
