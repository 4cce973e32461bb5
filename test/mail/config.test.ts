import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, liveSettingsFrom, readConfigFile, smtpFrom } from "../../src/config/load.ts";
import type { ConfigFile } from "../../src/config/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "gengate-smtp-config-"));
function config(toml: string): ConfigFile {
  const p = join(dir, `c-${Math.random()}.toml`);
  writeFileSync(p, toml);
  return readConfigFile(p);
}

describe("[smtp] configuration", () => {
  test("absent: null (nothing is mailed)", () => {
    expect(liveSettingsFrom(null, {}).smtp).toBeNull();
    expect(liveSettingsFrom(config("[limits]\nin_flight = 3\n"), {}).smtp).toBeNull();
  });

  test('defaults: STARTTLS on 587; tls = "tls" defaults to 465; password from the environment', () => {
    const a = smtpFrom(config('[smtp]\nhost = "mail.example.com"\nfrom = "billing@example.com"\n'), {});
    expect(a).toEqual({
      host: "mail.example.com",
      port: 587,
      tls: "starttls",
      user: null,
      password: null,
      from: "billing@example.com",
    });
    const b = smtpFrom(
      config(
        '[smtp]\nhost = "mail.example.com"\ntls = "tls"\nuser = "gengate"\npassword_env = "SMTP_PASS"\nfrom = "gengate <billing@example.com>"\n',
      ),
      { SMTP_PASS: "pw from env" },
    );
    expect([b?.port, b?.tls, b?.user, b?.password, b?.from]).toEqual([
      465,
      "tls",
      "gengate",
      "pw from env",
      "gengate <billing@example.com>",
    ]);
  });

  test("password from a file (trimmed)", () => {
    const pw = join(dir, "pw");
    writeFileSync(pw, "file secret\n");
    const s = smtpFrom(
      config(`[smtp]\nhost = "h"\nport = 2525\nuser = "u"\npassword_file = "${pw}"\nfrom = "a@b.c"\n`),
      {},
    );
    expect([s?.port, s?.password]).toEqual([2525, "file secret"]);
  });

  test("refused: an inline password, an unknown tls mode, a missing env var or file, user without password", () => {
    expect(() => config('[smtp]\nhost = "h"\nfrom = "a@b.c"\npassword = "inline"\n')).toThrow(/unknown key/);
    expect(() => config('[smtp]\nhost = "h"\nfrom = "a@b.c"\ntls = "ssl"\n')).toThrow(/smtp\.tls/);
    expect(() => config('[smtp]\nfrom = "a@b.c"\n')).toThrow(/smtp/);
    const c = (extra: string) => config(`[smtp]\nhost = "h"\nfrom = "a@b.c"\n${extra}`);
    expect(() => smtpFrom(c('user = "u"\npassword_env = "NOPE"\n'), {})).toThrow(
      /smtp.password_env: environment variable NOPE is not set/,
    );
    expect(() => smtpFrom(c(`user = "u"\npassword_file = "${join(dir, "absent")}"\n`), {})).toThrow(
      /smtp.password_file: cannot read/,
    );
    expect(() => smtpFrom(c('user = "u"\n'), {})).toThrow(/smtp.user: needs password_env or password_file/);
    expect(() => smtpFrom(c('password_env = "P"\n'), { P: "x" })).toThrow(/no user/);
    expect(() => smtpFrom(c('user = "u"\npassword_env = "P"\npassword_file = "/x"\n'), { P: "x" })).toThrow(
      ConfigError,
    );
    expect(() => smtpFrom(config('[smtp]\nhost = "h"\nfrom = "not an address"\n'), {})).toThrow(/smtp.from/);
  });
});
