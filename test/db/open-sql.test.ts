import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { LATEST_SCHEMA_VERSION } from "../../src/db/migrations.ts";
import { openSql } from "../../src/db/open-sql.ts";
import { createTestDatabase, dialects } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/server.ts";

test.each(dialects())("openSql(%s) returns a migrated Sql of that dialect", async (dialect) => {
  const pg = dialect === "postgres" ? await createTestDatabase() : null;
  const dir = tempDir();
  const opened = await openSql(
    pg ? { kind: "postgres", url: pg.url, password: null } : { kind: "sqlite" },
    join(dir, "gengate.db"),
  );
  try {
    expect(opened.sql.dialect).toBe(dialect);
    const row = await opened.sql.get("SELECT max(version) AS v FROM schema_migrations");
    expect(row).toEqual({ v: BigInt(LATEST_SCHEMA_VERSION) });
    expect(await opened.sql.all("SELECT kind, bytes FROM storage_usage ORDER BY kind")).toEqual([
      { kind: "outputs", bytes: 0n },
      { kind: "uploads", bytes: 0n },
    ]);
  } finally {
    await opened.close();
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
});
