import { describe, expect, test } from "bun:test";
import { ConfigError, liveSettingsFrom } from "../../src/config/load.ts";

describe("[metrics] configuration", () => {
  test("token precedence: GENGATE_METRICS_TOKEN over token_file over token", () => {
    const file = { metrics: { token: "from-config-0123456789" } };
    expect(liveSettingsFrom(file, {}).metrics.token).toBe("from-config-0123456789");
    expect(liveSettingsFrom(file, { GENGATE_METRICS_TOKEN: "from-env-0123456789ab" }).metrics.token).toBe(
      "from-env-0123456789ab",
    );
    expect(liveSettingsFrom({}, {}).metrics).toEqual({ token: null, listen: null, listenAuth: true });
  });

  test("a short or spaced token and an unreadable token_file stop the start with one line", () => {
    expect(() => liveSettingsFrom({}, { GENGATE_METRICS_TOKEN: "short" })).toThrow(ConfigError);
    expect(() => liveSettingsFrom({}, { GENGATE_METRICS_TOKEN: "has a space in it 0123" })).toThrow(
      /GENGATE_METRICS_TOKEN: the metrics token must be 16/,
    );
    expect(() => liveSettingsFrom({ metrics: { token_file: "/no/such/file" } }, {})).toThrow(
      /metrics.token_file: cannot read/,
    );
  });

  test("listen: host:port, IPv6 in brackets; listen_auth none only when said", () => {
    expect(liveSettingsFrom({ metrics: { listen: "127.0.0.1:9091" } }, {}).metrics).toEqual({
      token: null,
      listen: { host: "127.0.0.1", port: 9091 },
      listenAuth: true,
    });
    const v6 = liveSettingsFrom({ metrics: { listen: "[::1]:9091", listen_auth: "none" } }, {}).metrics;
    expect(v6.listen).toEqual({ host: "::1", port: 9091 });
    expect(v6.listenAuth).toBe(false);
    expect(() => liveSettingsFrom({ metrics: { listen: "127.0.0.1:99999" } }, {})).toThrow(/metrics.listen/);
  });
});
