import { Database } from "bun:sqlite";
import { afterAll, beforeAll } from "bun:test";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { MigrateOptions } from "../../src/backup/migrate-data.ts";
import { LocalBlobBackend } from "../../src/files/blob-backend-local.ts";
import type { S3BlobBackend } from "../../src/files/blob-backend-s3.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { pollUntil, startFunded } from "./api.ts";
import { createTestDatabase, type TestDatabase } from "./postgres.ts";
import { startS3, type TestS3 } from "./s3.ts";
import { runGengate, tempDir } from "./server.ts";

/**
 * A data dir written by a real `gengate serve`, then stopped: jobs completed (charges, outputs),
 * failed and cancelled (releases), jobs still open when the server stopped (open holds), uploads,
 * admin credits, redeem codes made by the CLI and one redeemed (a top-up), a paid order with its
 * payment notification and top-up, people (the owner's sign-up through the console), a session and
 * an invite, and webhook deliveries (to a closed local port, so they stay pending).
 * Made once per test process; each test migrates its own copy (`copy()`).
 */
export interface PopulatedDataDir {
  dir: string;
  /** A fresh copy of the stopped data dir (files and database), removed by `cleanup`. */
  copy(): string;
  cleanup(): void;
}

let made: Promise<{ dir: string; remove(): void }> | null = null;
let users = 0;

/** A handle on the process's one populated data dir; each handle's `cleanup` removes its copies, the last one the dir. */
export async function populatedDataDir(): Promise<PopulatedDataDir> {
  made ??= build();
  users++;
  const base = await made;
  const copies: string[] = [];
  return {
    dir: base.dir,
    copy() {
      const to = tempDir("gengate-migrate-src-");
      cpSync(base.dir, to, { recursive: true });
      copies.push(to);
      return to;
    },
    cleanup() {
      for (const c of copies) rmSync(c, { recursive: true, force: true });
      if (--users === 0) {
        base.remove();
        made = null;
      }
    },
  };
}

async function build(): Promise<{ dir: string; remove(): void }> {
  const s = await startFunded('[webhooks]\nallow_private_cidrs = ["127.0.0.0/8"]\n', "100");
  try {
    const dd = ["--data-dir", s.dataDir];
    // People and a session: the first start's owner invite, accepted through the console.
    const path = new URL(s.ownerInvite!).pathname;
    const signup = await fetch(`${s.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: new URL(s.url).origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        email: "owner@example.com",
        password: "a long enough password",
      }).toString(),
    });
    if (signup.status !== 303) throw new Error(`sign-up: ${signup.status}`);
    const invite = await runGengate(["user", "invite", "--email", "second@example.com", ...dd]);
    if (invite.code !== 0) throw new Error(`user invite: ${invite.stderr}`);

    // Redeem codes (CLI) and one redeemed through the API: a TOPUP entry.
    const codes = await runGengate([
      "code",
      "create",
      "--amount",
      "5",
      "--currency",
      "USD",
      "--count",
      "3",
      "--json",
      ...dd,
    ]);
    if (codes.code !== 0) throw new Error(`code create: ${codes.stderr}`);
    const code = (JSON.parse(codes.stdout) as { codes: string[] }).codes[0]!;
    const redeemed = await s.post("/v1/account/redeem", { code });
    if (redeemed.status !== 200) throw new Error(`redeem: ${redeemed.status} ${await redeemed.text()}`);

    // Uploads.
    for (let i = 0; i < 3; i++) {
      const r = await s.fetch("/v1/files", {
        method: "POST",
        body: encodePng(40 + i, 30, i),
        headers: { "content-type": "image/png" },
      });
      if (r.status !== 200 && r.status !== 201) throw new Error(`upload: ${r.status} ${await r.text()}`);
    }
    // Completed jobs with outputs (charges), one with a webhook (a pending delivery).
    const hook = "?webhook_url=http%3A%2F%2F127.0.0.1%3A9%2Fhook";
    for (const [model, input] of [
      ["sandbox/image", { prompt: "a cat", num_images: 2, width: 96, height: 64 }],
      ["sandbox/speech", { text: "hello there" }],
    ] as const) {
      const res = await s.post(`/v1/run/${model}${hook}`, input);
      if (res.status !== 200) throw new Error(`${model}: ${res.status} ${await res.text()}`);
    }
    // A failed job and a cancelled one (releases).
    await s.post(`/v1/run/sandbox/image${hook}`, { prompt: "x", sandbox: { fail: true } });
    const slow = (await (
      await s.post("/v1/queue/sandbox/image", { prompt: "slow", sandbox: { delay_ms: 60_000 } })
    ).json()) as { request_id: string };
    await s.post(`/v1/requests/${slow.request_id}/cancel`, {});
    // Jobs still open when the server stops: their holds stay open.
    for (let i = 0; i < 2; i++)
      await s.post("/v1/queue/sandbox/image", { prompt: `open ${i}`, sandbox: { delay_ms: 120_000 } });
    await pollUntil(
      async () =>
        ((await (await s.get("/v1/requests?limit=50")).json()) as { data?: unknown[] }).data?.length ?? 0,
      (n) => n >= 6,
    );
    const code0 = await s.stop("SIGTERM");
    if (code0 !== 0) throw new Error(`server exit ${code0}: ${s.stderr()}`);

    // A paid order with its payment notification and top-up (no payment provider in tests).
    const db = new Database(join(s.dataDir, "gengate.db"), { strict: true, safeIntegers: true });
    try {
      db.transaction(() => {
        const now = BigInt(Math.floor(Date.now() / 1000));
        const account = db
          .query("SELECT id, balance_micro, held_micro FROM accounts WHERE name = 'default'")
          .get() as {
          id: string;
          balance_micro: bigint;
          held_micro: bigint;
        };
        const amount = 20_000_000n;
        db.query(
          `INSERT INTO orders (id, account_id, person_id, provider, currency, amount_micro, status, provider_ref,
             checkout_url, failure, created_at, expires_at, paid_at, refunded_micro)
           VALUES ('ord_migrate1', ?, NULL, 'stripe', 'USD', ?, 'paid', 'cs_test_1', 'https://checkout.test/1', NULL, ?, ?, ?, 0)`,
        ).run(account.id, amount, now, now + 86400n, now);
        db.query(
          `INSERT INTO orders (id, account_id, person_id, provider, currency, amount_micro, status, provider_ref,
             checkout_url, failure, created_at, expires_at, paid_at, refunded_micro)
           VALUES ('ord_migrate2', ?, NULL, 'stripe', 'USD', 10000000, 'created', NULL, NULL, NULL, ?, ?, NULL, 0)`,
        ).run(account.id, now, now + 86400n);
        db.query(
          `INSERT INTO payment_notifications (provider, order_id, event_id, event_type, outcome, detail, received_at)
           VALUES ('stripe', 'ord_migrate1', 'evt_1', 'checkout.session.completed', 'credited', NULL, ?)`,
        ).run(now);
        const balance = account.balance_micro + amount;
        db.query(
          `INSERT INTO ledger_entries (account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
             balance_after_micro, held_after_micro, reason, created_at, ref_id)
           VALUES (?, 'topup', 'TOPUP', ?, ?, 0, ?, ?, 'Stripe payment cs_test_1', ?, 'ord_migrate1')`,
        ).run(account.id, amount, amount, balance, account.held_micro, now);
        db.query("UPDATE accounts SET balance_micro = ? WHERE id = ?").run(balance, account.id);
      })();
    } finally {
      db.close();
    }
    return {
      dir: s.dataDir,
      remove() {
        s.cleanup();
        rmSync(s.dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    s.cleanup();
    throw err;
  }
}

export interface MigrationCase {
  /** A fresh copy of the populated data dir. */
  dataDir: string;
  /** A fresh, empty PostgreSQL database. */
  db: TestDatabase;
  /** A fresh prefix of the s3rver bucket. */
  target: S3BlobBackend;
  /** migrateData's options from the copy's files/ to them (mode "copy"). */
  options: MigrateOptions;
}

export interface MigrationFixture {
  s3(): TestS3;
  /** A fresh, empty database, dropped after the file. */
  database(): Promise<TestDatabase>;
  /** A copy of the data dir, a database and a bucket prefix to migrate between. */
  setup(): Promise<MigrationCase>;
}

/**
 * What the migrate-data tests share: the populated data dir, an s3rver and databases dropped at the
 * end (hooks registered in the calling describe block).
 */
export function migrationFixture(): MigrationFixture {
  let source: PopulatedDataDir | null = null;
  let s3: TestS3 | null = null;
  const dbs: TestDatabase[] = [];
  beforeAll(async () => {
    [source, s3] = await Promise.all([populatedDataDir(), startS3()]);
  }, 120_000);
  afterAll(async () => {
    for (const d of dbs) await d.drop();
    source?.cleanup();
    await s3?.stop();
  });
  const database = async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    return db;
  };
  return {
    s3: () => s3!,
    database,
    async setup() {
      const dataDir = source!.copy();
      const db = await database();
      const target = s3!.store();
      return {
        dataDir,
        db,
        target,
        options: {
          dataDir,
          target: { url: db.url, password: null },
          sourceBlobs: new LocalBlobBackend(join(dataDir, "files")),
          targetBlobs: target,
          mode: "copy",
        },
      };
    },
  };
}
