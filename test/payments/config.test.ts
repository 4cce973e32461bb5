// [payments] in the config file: secrets only from *_env / *_file, amounts checked, and a start with a
// bad secret file stops with one line.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, liveSettingsFrom, readConfigFile } from "../../src/config/load.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { runGengate, tempDir } from "../helpers/server.ts";
import { PAYMENT_ENV, paymentsConfig } from "./helpers.ts";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configError(text: string, env: Record<string, string> = PAYMENT_ENV): string {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(path, text);
  try {
    liveSettingsFrom(readConfigFile(path), env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("no error");
}

describe("[payments]", () => {
  test("defaults: no provider, default amounts", () => {
    const p = liveSettingsFrom(null, {}).payments;
    expect(p.stripe).toBeNull();
    expect(p.yookassa).toBeNull();
    expect(p.amounts.USD.minimumMicro).toBe(5_000_000n);
    expect(p.orderTtlSeconds).toBe(86_400);
  });

  test("providers from env and files; API host, port and protocol from api_base", () => {
    const secret = join(dir, "yk.secret");
    writeFileSync(secret, "live_file_secret\n");
    const file = paymentsConfig("http://127.0.0.1:4242", "http://127.0.0.1:4343");
    const yk = file.payments!.yookassa as Record<string, unknown>;
    delete yk.secret_key_env;
    yk.secret_key_file = secret;
    const p = liveSettingsFrom(file as ConfigFile, PAYMENT_ENV).payments;
    expect(p.stripe).toMatchObject({
      secretKey: PAYMENT_ENV.TEST_STRIPE_SK,
      api: { protocol: "http", host: "127.0.0.1", port: 4242 },
      checkoutOrigin: "http://127.0.0.1:4242",
      timeoutMs: 2000,
    });
    expect(p.yookassa).toMatchObject({ secretKey: "live_file_secret", apiBase: "http://127.0.0.1:4343/v3" });
    expect(p.amounts.RUB.presetsMicro).toEqual([1_000_000_000n]);
    const real = liveSettingsFrom(
      { payments: { stripe: { secret_key_env: "A", webhook_secret_env: "B" } } } as ConfigFile,
      { A: "sk", B: "whsec" },
    ).payments.stripe!;
    expect(real.api).toEqual({ protocol: "https", host: "api.stripe.com", port: 443 });
    expect(real.checkoutOrigin).toBe("https://checkout.stripe.com");
  });

  test("secrets are never inline; missing, unreadable or empty ones are one line naming the key", () => {
    expect(
      configError('[payments.stripe]\nsecret_key = "sk_live_x"\nwebhook_secret_env = "TEST_STRIPE_WHSEC"\n'),
    ).toContain("unknown key");
    expect(configError('[payments.stripe]\nwebhook_secret_env = "TEST_STRIPE_WHSEC"\n')).toBe(
      "payments.stripe: secret_key_env or secret_key_file is required (secrets are never written in the config)",
    );
    expect(
      configError('[payments.stripe]\nsecret_key_env = "NOPE"\nwebhook_secret_env = "TEST_STRIPE_WHSEC"\n'),
    ).toBe("payments.stripe.secret_key_env: environment variable NOPE is not set");
    expect(
      configError(`[payments.yookassa]\nshop_id = "1"\nsecret_key_file = "${join(dir, "missing")}"\n`),
    ).toMatch(/^payments\.yookassa\.secret_key_file: cannot read .*missing \(ENOENT\)$/);
    const empty = join(dir, "empty.secret");
    writeFileSync(empty, "\n");
    expect(configError(`[payments.yookassa]\nshop_id = "1"\nsecret_key_file = "${empty}"\n`)).toContain(
      "is empty",
    );
    expect(
      configError(
        '[payments.stripe]\nsecret_key_env = "TEST_STRIPE_SK"\nsecret_key_file = "x"\nwebhook_secret_env = "TEST_STRIPE_WHSEC"\n',
      ),
    ).toContain("not both");
  });

  test("amounts: at most 2 decimals, minimum above 0 and not above maximum, presets inside", () => {
    expect(configError('[payments.usd]\nminimum = "1.005"\n')).toContain("payments.usd.minimum");
    expect(configError('[payments.usd]\nminimum = "0"\n')).toContain("must be above 0");
    expect(configError('[payments.usd]\nminimum = "50"\nmaximum = "10"\n')).toContain(
      "must not be below minimum",
    );
    expect(configError('[payments.rub]\npresets = ["1"]\n')).toContain(
      "payments.rub.presets: 1.00 is outside",
    );
    expect(configError("[payments]\norder_expiry_hours = 48\n")).toContain("order_expiry_hours");
  });

  test("gengate serve with an unreadable secret file stops before starting, with one line", async () => {
    const path = join(dir, "serve.toml");
    writeFileSync(
      path,
      `[payments.yookassa]\nshop_id = "1"\nsecret_key_file = "${join(dir, "nope.secret")}"\n`,
    );
    const r = await runGengate(["serve", "--port", "0", "--data-dir", join(dir, "data"), "--config", path]);
    expect(r.code).not.toBe(0);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("payments.yookassa.secret_key_file: cannot read");
  });
});
