import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  BackendNotReadyError,
  ConfigError,
  databaseSettings,
  readConfigFile,
  refuseUnconvertedBackend,
  resolveServerSettings,
} from "../../src/config/load.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("database_url", () => {
  test("absent or sqlite: is the data dir's SQLite database", () => {
    expect(databaseSettings({}, null)).toEqual({ kind: "sqlite" });
    expect(databaseSettings({ GENGATE_DATABASE_URL: "sqlite:" }, null)).toEqual({ kind: "sqlite" });
    expect(resolveServerSettings({}, {}, null, null).database).toEqual({ kind: "sqlite" });
    expect(() => refuseUnconvertedBackend({ kind: "sqlite" })).not.toThrow();
  });

  test("postgres:// from the config file; the environment wins over it", () => {
    const path = join(dir, "c.toml");
    writeFileSync(
      path,
      `[server]\ndatabase_url = "postgres://gengate@db.internal:6432/gengate?sslmode=require"\n`,
    );
    const file = readConfigFile(path);
    expect(databaseSettings({}, file)).toEqual({
      kind: "postgres",
      url: "postgres://gengate@db.internal:6432/gengate?sslmode=require",
      password: null,
    });
    expect(databaseSettings({ GENGATE_DATABASE_URL: "postgresql://u@h/other" }, file)).toMatchObject({
      url: "postgresql://u@h/other",
    });
  });

  test("the password: GENGATE_DATABASE_PASSWORD_FILE > PGPASSWORD > the URL; never kept in the URL", () => {
    const url = "postgres://u:in%20url@h:5432/db";
    expect(databaseSettings({ GENGATE_DATABASE_URL: url }, null)).toEqual({
      kind: "postgres",
      url: "postgres://u@h:5432/db",
      password: "in url",
    });
    expect(databaseSettings({ GENGATE_DATABASE_URL: url, PGPASSWORD: "env" }, null)).toMatchObject({
      password: "env",
    });
    const pw = join(dir, "pw");
    writeFileSync(pw, "from-file\n");
    expect(
      databaseSettings(
        { GENGATE_DATABASE_URL: url, PGPASSWORD: "env", GENGATE_DATABASE_PASSWORD_FILE: pw },
        null,
      ),
    ).toMatchObject({ password: "from-file" });
  });

  test("a PostgreSQL database_url is refused by backup and restore (SQLite-file commands)", () => {
    const settings = databaseSettings({ GENGATE_DATABASE_URL: "postgres://u@h/db" }, null);
    let err: unknown = null;
    try {
      refuseUnconvertedBackend(settings);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BackendNotReadyError);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain("docs/scale-out.md");
  });
});
