import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { CacheInvalidation } from "../../src/db/invalidation.ts";
import { hashSecret } from "../../src/lib/api-keys.ts";
import {
  dataDirPaths,
  ensureWritableDataDir,
  replaceAdminTokenFile,
  rotateServerSecret,
} from "../../src/server/datadir.ts";
import {
  ADMIN_TOKEN_SHA256,
  LINK_SECRET,
  openServerSecrets,
  readOrCreateSharedSecret,
  replaceSharedAdminToken,
  rotateSharedLinkSecret,
  sharedLinkSecrets,
} from "../../src/server/shared-secrets.ts";
import { type Instances, openInstances } from "../helpers/instances.ts";
import { dialects, postgresAvailable } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/server.ts";

// Shared secrets (src/server/shared-secrets.ts): rows every instance shares on PostgreSQL, the data
// dir's files on SQLite (unchanged).

let open: Instances | null = null;
const dirs: string[] = [];
const started: CacheInvalidation[] = [];
afterEach(async () => {
  for (const inv of started.splice(0)) await inv.stop();
  await open?.close();
  open = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir() {
  const d = tempDir("gengate-secrets-");
  dirs.push(d);
  const paths = dataDirPaths(d);
  ensureWritableDataDir(paths);
  return paths;
}

describe.each(dialects())("readOrCreateSharedSecret on %s", (dialect) => {
  test("instances creating one secret at once agree on the first one stored", async () => {
    open = await openInstances(dialect, 4);
    const results = await Promise.all(
      open.list.map(({ sql }, i) => readOrCreateSharedSecret(sql, "test_secret", `value-${i}`)),
    );
    expect(results.filter((r) => r.created).length).toBe(1);
    const winner = results.find((r) => r.created)!.value;
    expect(results.map((r) => r.value)).toEqual([winner, winner, winner, winner]);
    expect(await readOrCreateSharedSecret(open.list[0]!.sql, "test_secret", "later")).toEqual({
      value: winner,
      created: false,
    });
  });
});

describe("openServerSecrets on SQLite", () => {
  test("the data dir's files, as before: created at the first start, read back at the next", async () => {
    open = await openInstances("sqlite", 1);
    const paths = dataDir();
    const first = await openServerSecrets({ kind: "sqlite" }, open.list[0]!.sql, paths);
    expect(first.newAdminToken).toMatch(/^gat_/);
    expect(readFileSync(paths.adminToken, "utf8").trim()).toBe(first.newAdminToken!);
    expect(first.linkSecrets).toEqual([readFileSync(paths.serverSecret, "utf8").trim()]);
    const again = await openServerSecrets({ kind: "sqlite" }, open.list[0]!.sql, paths);
    expect(again.newAdminToken).toBeNull();
    expect(again.adminTokenHash).toEqual(hashSecret(first.newAdminToken!));
    const rows = await open.list[0]!.sql.all("SELECT * FROM shared_secrets");
    expect(rows).toEqual([]);
  });
});

describe("secret changes on SQLite", () => {
  test("SIGHUP re-reads the files: a rotated link secret and a new admin token", async () => {
    open = await openInstances("sqlite", 1);
    const paths = dataDir();
    const s = await openServerSecrets({ kind: "sqlite" }, open.list[0]!.sql, paths);
    const seen: { linkSecrets: string[]; adminTokenHash: Uint8Array }[] = [];
    s.follow(new CacheInvalidation(open.list[0]!.sql, open.list[0]!.bus), (now) => seen.push(now));
    rotateServerSecret(paths);
    const token = replaceAdminTokenFile(paths);
    expect(seen).toEqual([]); // nothing before the reload
    s.reload();
    expect(seen.at(-1)!.linkSecrets).toEqual([
      readFileSync(paths.serverSecret, "utf8").trim(),
      s.linkSecrets[0]!,
    ]);
    expect(seen.at(-1)!.adminTokenHash).toEqual(hashSecret(token));
    // An unreadable admin.token keeps the token in use; a missing link secret fails the reload.
    rmSync(paths.adminToken);
    s.reload();
    expect(seen.at(-1)!.adminTokenHash).toEqual(hashSecret(token));
    rmSync(paths.serverSecret);
    expect(() => s.reload()).toThrow();
  });
});

describe.skipIf(!postgresAvailable)("openServerSecrets on PostgreSQL", () => {
  const pg = { kind: "postgres" as const, url: "", password: null };

  test("instances starting at once agree; one prints the admin token; no files are written", async () => {
    open = await openInstances("postgres", 3);
    const paths = open.list.map(() => dataDir());
    const secrets = await Promise.all(
      open.list.map(({ sql }, i) => openServerSecrets({ ...pg, url: open!.target }, sql, paths[i]!)),
    );
    const printed = secrets.map((s) => s.newAdminToken).filter((t) => t !== null);
    expect(printed.length).toBe(1);
    for (const s of secrets) {
      expect(s.adminTokenHash).toEqual(hashSecret(printed[0]!));
      expect(s.linkSecrets).toEqual(secrets[0]!.linkSecrets);
      expect(s.linkSecrets.length).toBe(1);
    }
    for (const p of paths) expect(readdirSync(p.root)).toEqual([]);
    // The token itself is nowhere in the database: only its SHA-256.
    const rows = await open.list[0]!.sql.all<{ name: string; value: string }>(
      "SELECT name, value FROM shared_secrets ORDER BY name",
    );
    expect(rows.map((r) => r.name)).toEqual([ADMIN_TOKEN_SHA256, LINK_SECRET]);
    expect(rows[0]!.value).toBe(hashSecret(printed[0]!).toString("hex"));
    // A later start reads them and prints nothing.
    const later = await openServerSecrets({ ...pg, url: open.target }, open.list[0]!.sql, dataDir());
    expect(later.newAdminToken).toBeNull();
    expect(later.linkSecrets).toEqual(secrets[0]!.linkSecrets);
  });

  test("a data dir moved over seeds the rows from its files (its admin token and links stay valid)", async () => {
    open = await openInstances("postgres", 2);
    const paths = dataDir();
    writeFileSync(paths.adminToken, "gat_movedovermovedovermovedovermovedover12\n");
    writeFileSync(paths.serverSecret, "current-secret\n");
    writeFileSync(paths.previousServerSecret, "previous-secret\n");
    const s = await openServerSecrets({ ...pg, url: open.target }, open.list[0]!.sql, paths);
    expect(s.newAdminToken).toBeNull(); // the operator has it already
    expect(s.adminTokenHash).toEqual(hashSecret("gat_movedovermovedovermovedovermovedover12"));
    expect(s.linkSecrets).toEqual(["current-secret", "previous-secret"]);
    // Another instance without those files shares them.
    const other = await openServerSecrets({ ...pg, url: open.target }, open.list[1]!.sql, dataDir());
    expect(other.linkSecrets).toEqual(["current-secret", "previous-secret"]);
    expect(other.adminTokenHash).toEqual(s.adminTokenHash);
  });

  test("a rotation by the CLI reaches every instance's signer within 1 s; older links keep verifying", async () => {
    open = await openInstances("postgres", 2);
    const applied: string[][][] = [[], []];
    const admins: Uint8Array[][] = [[], []];
    const secrets = [];
    for (const [i, { sql, bus }] of open.list.entries()) {
      const invalidation = new CacheInvalidation(sql, bus);
      await invalidation.start();
      started.push(invalidation);
      const s = await openServerSecrets({ ...pg, url: open.target }, sql, dataDir());
      s.follow(invalidation, (now) => {
        applied[i]!.push(now.linkSecrets);
        admins[i]!.push(now.adminTokenHash);
      });
      secrets.push(s);
    }
    const before = secrets[0]!.linkSecrets;
    const cli = await open.add();
    await rotateSharedLinkSecret(cli.sql, new CacheInvalidation(cli.sql, cli.bus));
    const now = await sharedLinkSecrets(cli.sql);
    expect(now.length).toBe(2);
    expect(now[1]).toBe(before[0]!);
    expect(now[0]).not.toBe(before[0]!);
    await Bun.sleep(1_000);
    for (const list of applied) expect(list.at(-1)).toEqual(now);
    // A second rotation: the first secret no longer verifies anything.
    await rotateSharedLinkSecret(cli.sql, new CacheInvalidation(cli.sql, cli.bus));
    await Bun.sleep(1_000);
    for (const list of applied) expect(list.at(-1)).toEqual([expect.any(String), now[0]!]);
    // A new admin token: both instances hold its hash within 1 s.
    const token = await replaceSharedAdminToken(cli.sql, new CacheInvalidation(cli.sql, cli.bus));
    await Bun.sleep(1_000);
    for (const list of admins) expect(list.at(-1)).toEqual(hashSecret(token));
    expect(hashSecret(token)).not.toEqual(secrets[0]!.adminTokenHash);
    for (const s of secrets) await s.stop();
  });

  test("rotating before any server started refuses with a clear message", async () => {
    open = await openInstances("postgres", 1);
    const { sql, bus } = open.list[0]!;
    await expect(rotateSharedLinkSecret(sql, new CacheInvalidation(sql, bus))).rejects.toThrow(
      /start gengate serve once/,
    );
  });
});
