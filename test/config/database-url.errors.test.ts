import { afterAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, databaseSettings } from "../../src/config/load.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.each([
  ["not a URL", "just text", /not a URL/],
  ["another scheme", "mysql://u@h/db", /not a database URL/],
  ["no database", "postgres://u@h:5432/", /needs a user, a host and a database/],
  ["no user", "postgres://h/db", /needs a user/],
  ["a path under the database", "postgres://u@h/db/x", /database name/],
  ["an unknown parameter", "postgres://u@h/db?sslmod=require", /unknown parameter "sslmod"/],
  ["a bad sslmode", "postgres://u@h/db?sslmode=maybe", /sslmode must be one of/],
])("%s is refused with one line", (_name, url, message) => {
  expect(() => databaseSettings({ GENGATE_DATABASE_URL: url }, null)).toThrow(message);
  expect(() => databaseSettings({ GENGATE_DATABASE_URL: url }, null)).toThrow(ConfigError);
});

test("an error never shows the URL's password", () => {
  let message = "";
  try {
    databaseSettings({ GENGATE_DATABASE_URL: "mysql://u:s3cret-pw@h/db" }, null);
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toContain("***");
  expect(message).not.toContain("s3cret-pw");
});

test("an unreadable or empty password file is refused", () => {
  const env = { GENGATE_DATABASE_URL: "postgres://u@h/db" };
  expect(() =>
    databaseSettings({ ...env, GENGATE_DATABASE_PASSWORD_FILE: join(dir, "missing") }, null),
  ).toThrow(/cannot read .*ENOENT/);
  const empty = join(dir, "empty");
  writeFileSync(empty, "\n");
  expect(() => databaseSettings({ ...env, GENGATE_DATABASE_PASSWORD_FILE: empty }, null)).toThrow(/is empty/);
});
