import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../helpers/postgres.ts";

// A database that is down, silent or slow gives an error in bounded time, never a hang.

test("a refused connection rejects at once", async () => {
  const pg = PostgresSql.connect({ url: "postgres://gengate@127.0.0.1:1/gengate", password: null });
  try {
    const started = Date.now();
    const err = (await pg.get("SELECT 1").catch((e) => e)) as { code?: string };
    expect(err.code).toBe("ERR_POSTGRES_CONNECTION_REFUSED");
    expect(Date.now() - started).toBeLessThan(5000);
  } finally {
    await pg.close();
  }
});

describe("a server that accepts but never answers", () => {
  let silent: Server;
  let port = 0;
  beforeAll(async () => {
    silent = createServer(() => {}); // accepts and says nothing
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    port = (silent.address() as { port: number }).port;
  });
  afterAll(() => {
    silent.close();
  });

  test("fails after the connect timeout", async () => {
    const pg = PostgresSql.connect({
      url: `postgres://gengate@127.0.0.1:${port}/gengate`,
      password: null,
      connectTimeoutSeconds: 1,
    });
    try {
      const started = Date.now();
      const err = (await pg.get("SELECT 1").catch((e) => e)) as { code?: string };
      expect(err.code).toMatch(/^ERR_POSTGRES_/);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await pg.close();
    }
  });
});

describe.each(dialects().filter((d) => d === "postgres"))("on %s", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  test("a statement over the statement timeout is cancelled by the server", async () => {
    const pg = PostgresSql.connect({ url: db.url, password: null, statementTimeoutMs: 200 });
    try {
      const err = (await pg.get("SELECT pg_sleep(5)").catch((e) => e)) as { errno?: string };
      expect(err.errno).toBe("57014"); // query_canceled
      expect(await pg.get("SELECT 1 AS ok")).toEqual({ ok: 1n });
    } finally {
      await pg.close();
    }
  });

  test("environment variables do not redirect the connection (PGDATABASE)", async () => {
    const saved = process.env.PGDATABASE;
    process.env.PGDATABASE = "no_such_database";
    const pg = PostgresSql.connect({ url: db.url, password: null });
    try {
      const row = await pg.get<{ d: string }>("SELECT current_database() AS d");
      expect(row!.d).toBe(new URL(db.url).pathname.slice(1));
    } finally {
      if (saved === undefined) delete process.env.PGDATABASE;
      else process.env.PGDATABASE = saved;
      await pg.close();
    }
  });
});
