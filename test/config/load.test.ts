import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  ConfigError,
  liveSettingsFrom,
  readConfigFile,
  resolveServerSettings,
} from "../../src/config/load.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir();
const write = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe("config file", () => {
  test("TOML with every section parses", () => {
    const p = write(
      "ok.toml",
      `[server]\nport = 9000\nhost = "0.0.0.0"\npublic_url = "https://gen.example.com"\n[limits]\nwrites_per_minute = 60\nin_flight = 5\n[catalog]\nsandbox = false\n[[models]]\nid = "acme/img"\nkind = "image"\nprice_usd_micro = 1000\nmax = 4\n`,
    );
    const file = readConfigFile(p);
    const live = liveSettingsFrom(file);
    expect(live.limits.writesPerMinute).toBe(60);
    expect(live.limits.inFlight).toBe(5);
    expect(live.limits.runWaitSeconds).toBe(90);
    expect(live.sandbox).toBe(false);
    expect(live.models.length).toBe(1);
  });

  test("JSON by extension", () => {
    const p = write("ok.json", JSON.stringify({ limits: { in_flight: 3 } }));
    expect(liveSettingsFrom(readConfigFile(p)).limits.inFlight).toBe(3);
  });

  test("[retention] requests_days: 90 days by default, 0 keeps records forever", () => {
    expect(liveSettingsFrom({}).retention.requestsMs).toBe(90 * 86_400_000);
    const p = write("retention.toml", "[retention]\nrequests_days = 30\n");
    expect(liveSettingsFrom(readConfigFile(p)).retention.requestsMs).toBe(30 * 86_400_000);
    expect(liveSettingsFrom({ retention: { requests_days: 0 } }).retention.requestsMs).toBeNull();
    // One day would cut a webhook's retries short (27.6 hours): refused, naming the key.
    expect(() => liveSettingsFrom({ retention: { requests_days: 1 } })).toThrow(
      /retention\.requests_days: 0 \(keep forever\) or at least 2/,
    );
  });

  test("[retention] ledger_days: money kept forever by default; when set, at least 62 days and requests_days", () => {
    expect(liveSettingsFrom({}).retention.ledgerMs).toBeNull();
    const p = write("ledger.toml", "[retention]\nrequests_days = 90\nledger_days = 400\n");
    expect(liveSettingsFrom(readConfigFile(p)).retention).toEqual({
      requestsMs: 90 * 86_400_000,
      ledgerMs: 400 * 86_400_000,
    });
    expect(liveSettingsFrom({ retention: { ledger_days: 90 } }).retention.ledgerMs).toBe(90 * 86_400_000);
    // Below 62 days, below requests_days (90 by default), or with request records kept forever
    // (their jobs would keep every hold): refused, naming the key.
    for (const retention of [
      { ledger_days: 61, requests_days: 30 },
      { ledger_days: 80 },
      { ledger_days: 400, requests_days: 0 },
    ])
      expect(() => liveSettingsFrom({ retention })).toThrow(
        /retention\.ledger_days: 0 \(keep forever\) or at least 62/,
      );
  });

  test.each([
    ["unknown top-level key", "[sever]\nport = 1\n", /sever.*unknown key/],
    ["unknown nested key", "[limits]\nwrites_per_min = 1\n", /limits\.writes_per_min.*unknown key/],
    ["wrong type", '[server]\nport = "eighty"\n', /server\.port/],
    ["out of range", "[limits]\nin_flight = 0\n", /limits\.in_flight/],
    ["broken TOML", "[server\nport = 1\n", /not valid TOML/],
    ["bad public_url", '[server]\npublic_url = "ftp://x"\n', /server\.public_url/],
    ["negative retention", "[retention]\nrequests_days = -1\n", /retention\.requests_days/],
    ["retention in hours", "[retention]\nrequests_days = 1.5\n", /retention\.requests_days/],
    ["negative ledger retention", "[retention]\nledger_days = -1\n", /retention\.ledger_days/],
  ])("%s is one line naming the file and key", (_label, text, pattern) => {
    const p = write(`bad-${Math.random()}.toml`, text);
    let err: unknown;
    try {
      readConfigFile(p);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toMatch(pattern);
    expect(msg).toContain(p);
  });

  test("a missing file is a clear error", () => {
    expect(() => readConfigFile(join(dir, "absent.toml"))).toThrow(/cannot read \(ENOENT\)/);
  });
});

describe("server settings precedence", () => {
  const file = { server: { port: 7000, host: "10.0.0.1", data_dir: "/file" } };

  test("flag > env > file > default", () => {
    const s = resolveServerSettings(
      { port: "9001" },
      { GENGATE_PORT: "9002", GENGATE_HOST: "::1" },
      file,
      null,
    );
    expect(s.port).toBe(9001);
    expect(s.host).toBe("::1");
    expect(s.dataDir).toBe("/file");
    const d = resolveServerSettings({}, {}, null, null);
    expect(d.port).toBe(8080);
    expect(d.host).toBe("127.0.0.1");
  });

  test("public url trailing slashes are trimmed", () => {
    expect(resolveServerSettings({ "public-url": "https://x.example/gw/" }, {}, null, null).publicUrl).toBe(
      "https://x.example/gw",
    );
  });

  test.each(["abc", "70000", "-1", "1e3"])("port %p is refused", (port) => {
    expect(() => resolveServerSettings({ port }, {}, null, null)).toThrow(ConfigError);
  });

  test("a bad public url from the environment is refused", () => {
    expect(() => resolveServerSettings({}, { GENGATE_PUBLIC_URL: "not a url" }, null, null)).toThrow(
      /public-url/,
    );
  });
});

describe("TLS settings", () => {
  const fixtures = join(import.meta.dir, "../compat/fixtures");
  const cert = join(fixtures, "tls.test.crt");
  const key = join(fixtures, "tls.test.key");

  test("none: plain HTTP", () => {
    expect(resolveServerSettings({}, {}, null, null).tls).toBeNull();
  });

  test("flag > env > file, per file", () => {
    const file = { server: { tls_cert: "/file.crt", tls_key: key } };
    const s = resolveServerSettings({ "tls-cert": cert }, { GENGATE_TLS_CERT: "/env.crt" }, file, null);
    expect(s.tls).toEqual({ cert, key });
    const e = resolveServerSettings({}, { GENGATE_TLS_CERT: cert, GENGATE_TLS_KEY: key }, null, null);
    expect(e.tls).toEqual({ cert, key });
  });

  test("both or neither", () => {
    expect(() => resolveServerSettings({ "tls-cert": cert }, {}, null, null)).toThrow(
      /tls-cert is set but tls-key is not/,
    );
    expect(() => resolveServerSettings({}, { GENGATE_TLS_KEY: key }, null, null)).toThrow(
      /tls-key is set but tls-cert is not/,
    );
  });

  test("unreadable or non-PEM files are refused", () => {
    const notPem = join(dir, "not.pem");
    writeFileSync(notPem, "hello");
    expect(() => resolveServerSettings({ "tls-cert": notPem, "tls-key": key }, {}, null, null)).toThrow(
      /not a PEM certificate/,
    );
    expect(() => resolveServerSettings({ "tls-cert": cert, "tls-key": cert }, {}, null, null)).toThrow(
      /not a PEM private key/,
    );
    expect(() =>
      resolveServerSettings({ "tls-cert": join(dir, "absent.crt"), "tls-key": key }, {}, null, null),
    ).toThrow(/cannot read/);
  });

  test("the config file accepts tls_cert and tls_key", () => {
    const p = join(dir, "tls.toml");
    writeFileSync(p, `[server]\ntls_cert = "${cert}"\ntls_key = "${key}"\n`);
    expect(resolveServerSettings({}, {}, readConfigFile(p), p).tls).toEqual({ cert, key });
  });
});
