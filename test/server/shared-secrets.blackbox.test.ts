import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { createTestDatabase, postgresAvailable, type TestDatabase } from "../helpers/postgres.ts";
import { runGengate, startServer, type TestServer, tempDir } from "../helpers/server.ts";

// Two `gengate serve` on one PostgreSQL database, each with its own (empty) data dir: they share
// the admin token and the link-signing secrets (docs/scale-out.md "Shared secrets"), a key revoked on
// one is refused by the other within 1 s, and `gengate secret rotate` reaches both without a reload.

const servers: TestServer[] = [];
let database: TestDatabase | null = null;
afterAll(async () => {
  for (const s of servers) s.cleanup();
  await database?.drop();
});

const json = { "content-type": "application/json" };

describe.skipIf(!postgresAvailable)("two instances on one PostgreSQL database", () => {
  test("shared admin token, keys and link secrets", async () => {
    database = await createTestDatabase();
    const env = { GENGATE_DATABASE_URL: database.url };
    // Started together on an empty database: one creates the secrets and the default account.
    const [a, b] = await Promise.all([startServer({ env }), startServer({ env })]);
    servers.push(a!, b!);
    const tokens = [a!.adminToken, b!.adminToken].filter((t) => t !== null);
    const keys = [a!.defaultKey, b!.defaultKey].filter((k) => k !== null);
    expect(tokens.length).toBe(1);
    expect(keys.length).toBe(1);
    for (const s of [a!, b!]) expect(readdirSync(s.dataDir).filter((f) => f !== "files")).toEqual([]);
    const admin = { authorization: `Bearer ${tokens[0]}` };
    for (const s of [a!, b!])
      expect((await fetch(`${s.url}/admin/v1/accounts`, { headers: admin })).status).toBe(200);

    // A key made on A works on B; revoked on A, B refuses it at the first request after 1 s.
    const made = (await (
      await fetch(`${a!.url}/v1/keys`, {
        method: "POST",
        headers: { ...json, authorization: `Key ${keys[0]}` },
        body: JSON.stringify({ name: "shared" }),
      })
    ).json()) as { id: string; key: string };
    expect((await b!.fetch("/v1/account", { key: made.key })).status).toBe(200);
    const revoked = await fetch(`${a!.url}/admin/v1/keys/${made.id}`, { method: "DELETE", headers: admin });
    expect(revoked.status).toBe(200);
    await Bun.sleep(1_000);
    expect((await b!.fetch("/v1/account", { key: made.key })).status).toBe(401);

    // A signed upload URL from A is honoured by B, across a rotation by the CLI.
    const initiate = async (s: TestServer) => {
      const res = await fetch(`${s.url}/v1/storage/upload/initiate?storage_type=fal-cdn-v3`, {
        method: "POST",
        headers: { ...json, authorization: `Key ${keys[0]}` },
        body: JSON.stringify({ content_type: "image/png", file_name: "a.png" }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { upload_url: string }).upload_url;
    };
    const on = (url: string, s: TestServer) => url.replace(/^https?:\/\/[^/]+/, s.url);
    const put = (url: string) =>
      fetch(url, { method: "PUT", body: encodePng(16, 16, 2), headers: { "content-type": "image/png" } });
    const before = await initiate(a!);
    const beforeToo = await initiate(a!);
    const rotate = async () => {
      const r = await runGengate(["secret", "rotate", "--data-dir", tempDir()], env);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("every instance");
    };
    await rotate();
    await Bun.sleep(1_000);
    const after = await initiate(a!);
    expect(new URL(after).searchParams.get("sig")).not.toBe(new URL(before).searchParams.get("sig"));
    expect((await put(on(after, b!))).status).toBe(200); // B verifies A's new secret
    expect((await put(on(beforeToo, b!))).status).toBe(200); // and the previous one
    await rotate();
    await Bun.sleep(1_000);
    // Two rotations later the first secret is gone everywhere; the one before still verifies.
    expect([400, 403]).toContain((await put(on(before, b!))).status);
    expect([400, 403]).toContain((await put(on(before, a!))).status);
    expect((await put(on(await initiate(b!), a!))).status).toBe(200);

    // A new admin token from the CLI: both instances take it, and refuse the old one, after 1 s.
    const replaced = await runGengate(["secret", "admin-token", "--json", "--data-dir", tempDir()], env);
    expect(replaced.code).toBe(0);
    const { admin_token } = JSON.parse(replaced.stdout) as { admin_token: string };
    expect(admin_token).toMatch(/^gat_[0-9A-Za-z]{40}$/);
    await Bun.sleep(1_000);
    for (const s of [a!, b!]) {
      const headers = { authorization: `Bearer ${admin_token}` };
      expect((await fetch(`${s.url}/admin/v1/accounts`, { headers })).status).toBe(200);
      expect((await fetch(`${s.url}/admin/v1/accounts`, { headers: admin })).status).toBe(401);
    }
  });
});

describe("gengate secret admin-token", () => {
  test("a new admin token, printed once; after a reload the server takes it and refuses the old one", async () => {
    const s = await startServer();
    servers.push(s);
    const old = { authorization: `Bearer ${s.adminToken}` };
    expect((await fetch(`${s.url}/admin/v1/accounts`, { headers: old })).status).toBe(200);
    const r = await runGengate(["secret", "admin-token", "--json", "--data-dir", s.dataDir]);
    expect(r.code).toBe(0);
    const { admin_token } = JSON.parse(r.stdout) as { admin_token: string };
    expect(admin_token).toMatch(/^gat_[0-9A-Za-z]{40}$/);
    s.proc.kill("SIGHUP"); // SQLite: the file is re-read at a reload (PostgreSQL: without one)
    await Bun.sleep(1_000);
    expect((await fetch(`${s.url}/admin/v1/accounts`, { headers: old })).status).toBe(401);
    const headers = { authorization: `Bearer ${admin_token}` };
    expect((await fetch(`${s.url}/admin/v1/accounts`, { headers })).status).toBe(200);
    const bad = await runGengate(["secret", "admin-tokens", "--data-dir", s.dataDir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("usage: gengate secret rotate|admin-token");
  });
});
