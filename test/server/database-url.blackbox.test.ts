import { afterAll, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runGengate, tempDir } from "../helpers/server.ts";

// Backup and restore copy the SQLite file: with a postgres database_url they stop at once, before
// the data dir is touched: exit 2, one line naming the doc. A server whose PostgreSQL cannot be
// reached stops with a one-line error.

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PG = "postgres://gengate@127.0.0.1:1/gengate";

test.each([
  ["backup", ["backup", "OUT"], { GENGATE_DATABASE_URL: PG }],
  ["restore", ["restore", "OUT"], { GENGATE_DATABASE_URL: PG }],
] as const)("%s is refused", async (_name, args, env) => {
  const data = join(dir, `data-${crypto.randomUUID()}`);
  const out = join(dir, "x.tar");
  const r = await runGengate([...args.map((a) => (a === "OUT" ? out : a)), "--data-dir", data], { ...env });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^gengate: database_url: backup and restore .*docs\/scale-out\.md/);
  expect(r.stderr.trim().split("\n").length).toBe(1);
  expect(existsSync(data)).toBe(false);
});

test("serve on an unreachable PostgreSQL stops with one line", async () => {
  const r = await runGengate(["serve", "--port", "0", "--data-dir", join(dir, "unreachable")], {
    GENGATE_DATABASE_URL: "postgres://gengate@127.0.0.1:1/gengate?sslmode=disable",
  });
  expect(r.code).not.toBe(0);
  expect(r.stderr.trim().length).toBeGreaterThan(0);
});

test("a malformed database_url is a config error naming the key", async () => {
  const r = await runGengate(["serve", "--port", "0", "--data-dir", join(dir, "bad")], {
    GENGATE_DATABASE_URL: "postgres://nobody/",
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^gengate: database_url: .*needs a user, a host and a database name/);
});
