import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../../src/app/app.ts";
import { createAppContext } from "../../src/app/app-context.ts";
import { openSql } from "../../src/db/open-sql.ts";
import type { SqliteSql } from "../../src/db/sql-sqlite.ts";
import { closeAppContext, testContextOptions } from "../helpers/context.ts";
import { mockTextModel, startMockOpenAI } from "../helpers/mock-openai.ts";
import { tempDir } from "../helpers/server.ts";

// A chat call's order of events on a WAL file (docs/decisions.md "Durable commits"): the
// reservation is committed before the upstream is called, the upstream call overlaps the
// reservation's WAL sync, and nothing is answered (no reply, no first streamed byte) before the
// reservation and the settlement are durable. The WAL sync is gated here to hold that window open.

const mock = startMockOpenAI();
afterAll(() => mock.stop());
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function fileApp() {
  const dir = tempDir();
  const database = await openSql({ kind: "sqlite" }, join(dir, "gengate.db"));
  const created = await createAppContext({
    sql: database.sql,
    sqlite: database.sqlite,
    ...testContextOptions({
      providers: { mock: { type: "openai", base_url: `${mock.url}/v1` } },
      models: [mockTextModel("ok")],
    } as never),
    version: "0.0.0-test",
  });
  const { ctx, defaultKey } = created;
  cleanups.push(async () => {
    await closeAppContext(created);
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await ctx.ledger.topUp(defaultKey!.account.id, 10_000_000n, null);
  const wal = (database.sql as SqliteSql).walSync!;
  // The gate: syncs complete only when released (each waits for the real fdatasync too).
  let release: () => void = () => {};
  let gate: Promise<void> | null = null;
  const sync = wal.sync.bind(wal);
  wal.sync = async () => {
    await gate;
    await sync();
  };
  const app = createApp(ctx);
  return {
    ctx,
    closeGate() {
      gate = new Promise<void>((r) => {
        release = r;
      });
    },
    openGate: () => release(),
    chat: (stream: boolean) =>
      app.handle(
        new Request("http://localhost/v1/chat/completions", {
          method: "POST",
          headers: { authorization: `Key ${defaultKey!.key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "mock/ok", messages: [{ role: "user", content: "hi" }], stream }),
        }),
      ),
  };
}

async function until(predicate: () => boolean, what: string) {
  const deadline = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

describe.each([false, true])("chat (stream: %p) on a WAL file", (stream) => {
  test("the upstream is called while the reservation syncs; the answer waits until it is durable", async () => {
    const a = await fileApp();
    const before = mock.requests.length;
    a.closeGate();
    let answered = false;
    const pending = a.chat(stream).then((r) => {
      answered = true;
      return r;
    });
    // The upstream got the call although no sync has completed since the reservation's commit.
    await until(() => mock.requests.length > before, "the upstream call");
    await Bun.sleep(50); // the upstream's whole answer arrives meanwhile
    const holds = async (status: string) =>
      (await a.ctx.sql.get<{ n: bigint }>("SELECT count(*) AS n FROM holds WHERE status = ?", [status]))!.n;
    if (stream) {
      // The reservation is committed (visible); no byte is sent before its sync.
      expect(await holds("open")).toBe(1n);
    } else {
      // A whole reply is settled without waiting for the reservation's sync: the settlement's
      // own sync (after it, so it covers both) is what the answer waits for.
      expect(await holds("settled")).toBe(1n);
    }
    expect(answered).toBe(false);
    a.openGate();
    const res = await pending;
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(stream ? "data: [DONE]" : '"chat.completion"');
    const settled = await a.ctx.sql.get<{ n: bigint }>(
      "SELECT count(*) AS n FROM holds WHERE status = 'settled'",
    );
    expect(settled!.n).toBe(1n);
  });

  test("a reservation whose sync failed is never answered as a success", async () => {
    const a = await fileApp();
    const wal = (a.ctx.sql as SqliteSql).walSync!;
    const sync = wal.sync.bind(wal);
    let failed = 0;
    // The reservation's sync (the first one after the call starts) fails; later ones succeed.
    wal.sync = async () => {
      if (failed++ === 0) throw new Error("EIO: fdatasync failed");
      await sync();
    };
    const res = await a.chat(stream);
    const text = await res.text();
    expect(res.status).not.toBe(200);
    expect(text).not.toContain(stream ? "data: [DONE]" : '"chat.completion"');
    expect(failed).toBeGreaterThan(0);
  });
});
