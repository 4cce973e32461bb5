import { describe, expect, test } from "bun:test";
import { billing, overview, usage, walletCsv, walletPage } from "../../src/ledger/figures.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { testQueueServices } from "../helpers/services.ts";

async function refused(f: () => unknown, code: string, param: string) {
  try {
    await f();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code as string).toBe(code);
    expect((err as DomainError).param).toBe(param);
    return;
  }
  throw new Error("expected a DomainError");
}

describe("figures: bad input is a validation_error naming the parameter", async () => {
  const t = await testQueueServices();
  const id = t.account.id;

  test("usage ranges: dates that do not exist, wrong shapes, reversed, too long", async () => {
    for (const from of [
      "2026-02-30",
      "2026-2-01",
      "26-02-01",
      "2026-13-01",
      "",
      "2026-02-01T00:00:00Z",
      "1999-12-31",
    ])
      await refused(
        async () => await usage(t.ctx, id, { from, to: "2026-03-01" }),
        "validation_error",
        "from",
      );
    await refused(
      async () => await usage(t.ctx, id, { from: "2026-03-01", to: "2026-02-31" }),
      "validation_error",
      "to",
    );
    await refused(
      async () => await usage(t.ctx, id, { from: "2026-03-02", to: "2026-03-01" }),
      "validation_error",
      "from",
    );
    await refused(
      async () => await usage(t.ctx, id, { from: "2024-01-01", to: "2026-01-03" }),
      "validation_error",
      "from",
    );
    expect((await usage(t.ctx, id, { from: "2024-01-01", to: "2026-01-01" })).days.length).toBe(732);
  });

  test("wallet: unknown source, bad cursor, limit out of range", async () => {
    for (const source of ["api", "REFUND", "API,ADMIN", "'; DROP TABLE x"])
      await refused(async () => await walletPage(t.ctx, id, { source }), "validation_error", "source");
    await refused(async () => await walletCsv(t.ctx, id, { source: "x" }), "validation_error", "source");
    for (const cursor of ["0", "-1", "abc", "1e5", "9".repeat(30)])
      await refused(async () => await walletPage(t.ctx, id, { cursor }), "validation_error", "cursor");
    for (const limit of [0, 101, 1.5, Number.NaN])
      await refused(async () => await walletPage(t.ctx, id, { limit }), "validation_error", "limit");
    await refused(async () => await billing(t.ctx, id, { cursor: "x" }), "validation_error", "cursor");
  });

  test("an unknown account is not_found", async () => {
    await refused(async () => await overview(t.ctx, "acct_nope"), "not_found", "account_id");
    await refused(
      async () => await usage(t.ctx, "acct_nope", { from: "2026-01-01", to: "2026-01-02" }),
      "not_found",
      "account_id",
    );
    await refused(async () => await walletPage(t.ctx, "acct_nope"), "not_found", "account_id");
    await refused(async () => await billing(t.ctx, "acct_nope"), "not_found", "account_id");
  });
});
