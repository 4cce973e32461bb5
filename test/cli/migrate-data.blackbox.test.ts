// `gengate migrate-data` as an operator runs it (the compiled binary under GENGATE_BIN): exit codes,
// progress on stderr, the summary on stdout, and the database password never shown.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { onPostgres } from "../helpers/backend.ts";
import { type PopulatedDataDir, populatedDataDir } from "../helpers/populated-datadir.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../helpers/postgres.ts";
import { S3_ACCESS_KEY, S3_BUCKET, S3_SECRET_KEY, startS3, type TestS3 } from "../helpers/s3.ts";
import { runGengate, startServer, tempDir } from "../helpers/server.ts";

// Not in a PostgreSQL run (GENGATE_TEST_BACKEND=postgres): the source must be a SQLite data dir, and
// the normal run covers migrate-data, its PostgreSQL target included.
const hasPg = dialects().includes("postgres") && !onPostgres;
const PASSWORD = "pw-Never-Shown-7319";

describe.skipIf(!hasPg)("gengate migrate-data", () => {
  let source: PopulatedDataDir;
  let s3: TestS3;
  let config: string;
  const dbs: TestDatabase[] = [];
  beforeAll(async () => {
    [source, s3] = await Promise.all([populatedDataDir(), startS3()]);
    config = join(tempDir(), "gengate.toml");
    writeFileSync(
      config,
      `[storage.s3]\nendpoint = "${s3.endpoint}"\nregion = "us-east-1"\npath_style = true\n`,
    );
  }, 120_000);
  afterAll(async () => {
    for (const d of dbs) await d.drop();
    source?.cleanup();
    await s3?.stop();
  });

  const env = {
    AWS_ACCESS_KEY_ID: S3_ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: S3_SECRET_KEY,
    PGPASSWORD: PASSWORD,
  };
  let prefixes = 0;
  const storage = () => `s3://${S3_BUCKET}/cli${process.pid}-${++prefixes}`;
  /** The URL with a password in it too (PGPASSWORD wins; neither may be printed). */
  const withPassword = (url: string) => url.replace("postgres@", "postgres:url-Secret-4412@");
  const run = (args: string[], extra: Record<string, string> = {}) =>
    runGengate(["migrate-data", "--config", config, ...args], { ...env, ...extra }, 60_000);
  const noSecrets = (r: { stdout: string; stderr: string }) => {
    expect(`${r.stdout}${r.stderr}`).not.toContain(PASSWORD);
    expect(`${r.stdout}${r.stderr}`).not.toContain("url-Secret-4412");
  };

  test("dry run, copy, a refused re-run, --verify-only; progress on stderr, summary on stdout", async () => {
    const dataDir = source.copy();
    const db = await createTestDatabase();
    dbs.push(db);
    const to = withPassword(db.url);
    const bucket = storage();
    const dry = await run(["--to", to, "--storage", bucket, "--data-dir", dataDir, "--dry-run", "--json"]);
    expect(dry.stderr).toContain("migrate-data: checking the target database and bucket");
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout);
    expect(plan).toMatchObject({ mode: "dry-run", verified: false, files_copied: true });
    expect(plan.rows).toBeGreaterThan(20);
    expect(plan.target).toBe(db.url.replace("postgres@", "postgres@")); // no password in it
    noSecrets(dry);

    const copy = await run(["--to", to, "--storage", bucket, "--data-dir", dataDir, "--json"]);
    expect(copy.code).toBe(0);
    const report = JSON.parse(copy.stdout);
    expect(report).toMatchObject({ mode: "copy", verified: true, rows: plan.rows, files: plan.files });
    expect(report.storage).toBe(`${bucket}/`);
    expect(copy.stderr).toMatch(/migrate-data: rows: ledger_entries \d+ copied/);
    expect(copy.stderr).toMatch(/migrate-data: files: \d+\/\d+/);
    expect(copy.stderr).toContain("migrate-data: verified");
    noSecrets(copy);

    const again = await run(["--to", to, "--storage", storage(), "--data-dir", dataDir]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/^gengate: migrate-data refused: the target database is not empty/m);
    expect(again.stdout).toBe("");
    noSecrets(again);

    const verify = await run(["--to", to, "--storage", bucket, "--data-dir", dataDir, "--verify-only"]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain(`verified: ${db.url} holds the same ${plan.rows} rows`);
    noSecrets(verify);
  }, 180_000);

  test("without --storage the files stay in the data dir (checked); the human summary", async () => {
    const dataDir = source.copy();
    const db = await createTestDatabase();
    dbs.push(db);
    const r = await run(["--to", db.url, "--data-dir", dataDir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("copied and verified");
    expect(r.stdout).toMatch(/files: \d+ \(\d+ bytes\) stay in file:.*files \(checked\)/);
    expect(r.stdout).toMatch(/ {2}ledger_entries +\d+/);
  }, 120_000);

  test("a running source is refused (exit 3); bad usage is exit 2; an unreachable database exit 1", async () => {
    const dataDir = source.copy();
    const db = await createTestDatabase();
    dbs.push(db);
    const server = await startServer({ dataDir });
    try {
      const busy = await run(["--to", db.url, "--data-dir", dataDir]);
      expect(busy.code).toBe(3);
      expect(busy.stderr).toContain("is in use: stop the gengate server");
    } finally {
      await server.stop("SIGKILL");
      server.cleanup();
    }
    for (const [args, message] of [
      [["--data-dir", dataDir], "migrate-data needs --to"],
      [["--to", "mysql://u@h/db", "--data-dir", dataDir], "is not a database URL"],
      [["--to", "sqlite:", "--data-dir", dataDir], "--to: give the target PostgreSQL database"],
      [["--to", db.url, "--storage", "file:", "--data-dir", dataDir], "--storage takes s3://bucket/prefix"],
      [["--to", db.url, "--storage", "s3://Bad_Bucket", "--data-dir", dataDir], "storage_url:"],
      [["--to", db.url, "--dry-run", "--verify-only", "--data-dir", dataDir], "not both"],
      [["--to", db.url, "--bogus"], "unknown option --bogus"],
    ] as const) {
      const r = await run([...args]);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(message);
    }
    const badUrl = await run(["--to", "postgres://postgres:url-Secret-4412@@/x", "--data-dir", dataDir]);
    expect(badUrl.code).toBe(2);
    noSecrets(badUrl);

    const closed = withPassword(db.url).replace(/:(\d+)\//, ":1/");
    const down = await run(["--to", closed, "--data-dir", dataDir]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^gengate: migrate-data failed: /m);
    noSecrets(down);
  }, 180_000);

  test("GENGATE_DATABASE_URL set to postgres (the new setup's setting) does not stop migrate-data", async () => {
    const dataDir = source.copy();
    const db = await createTestDatabase();
    dbs.push(db);
    const r = await run(["--to", db.url, "--data-dir", dataDir, "--dry-run"], {
      GENGATE_DATABASE_URL: db.url,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("dry run: would copy");
  }, 60_000);
});
