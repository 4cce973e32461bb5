import { afterAll, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runGengate, tempDir } from "../helpers/server.ts";

// Until the stores run on PostgreSQL (docs/scale-out.md "Status"), a postgres database_url stops
// gengate at start, before the port or the data dir is touched: exit 2, one line naming the doc.

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PG = "postgres://gengate@127.0.0.1:1/gengate";

test.each([
  ["serve, from the environment", ["serve", "--port", "0"], { GENGATE_DATABASE_URL: PG }],
  ["serve, from the config file", ["serve", "--port", "0", "--config", "CONFIG"], {}],
  ["an operator command", ["account", "list"], { GENGATE_DATABASE_URL: PG }],
  [
    "user invite, from the config file",
    ["user", "invite", "--email", "a@b.example", "--config", "CONFIG"],
    {},
  ],
] as const)("%s is refused", async (_name, args, env) => {
  const data = join(dir, `data-${crypto.randomUUID()}`);
  const config = join(dir, "pg.toml");
  writeFileSync(config, `[server]\ndatabase_url = "${PG}"\n`);
  const r = await runGengate([...args.map((a) => (a === "CONFIG" ? config : a)), "--data-dir", data], {
    ...env,
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^gengate: database_url: PostgreSQL is not supported yet.*docs\/scale-out\.md/);
  expect(r.stderr.trim().split("\n").length).toBe(1);
  expect(existsSync(data)).toBe(false);
});

test("a malformed database_url is a config error naming the key", async () => {
  const r = await runGengate(["serve", "--port", "0", "--data-dir", join(dir, "bad")], {
    GENGATE_DATABASE_URL: "postgres://nobody/",
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^gengate: database_url: .*needs a user, a host and a database name/);
});
