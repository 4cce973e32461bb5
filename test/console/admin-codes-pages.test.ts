// The operator's redeem codes page (src/console/admin-codes-pages.ts).
import { describe, expect, test } from "bun:test";
import { consoleApp } from "./helpers.ts";

async function setup() {
  const c = await consoleApp();
  await c.person("op@example.com", "owner", true);
  await c.person("owner@example.com", "owner");
  const op = await c.signedIn("op@example.com");
  await op.page("/console/admin/codes");
  return { ...c, op };
}

const CODE = /[2-9A-HJ-NP-Z]{5}(?:-[2-9A-HJ-NP-Z]{5}){3}/g;

describe("operator page: redeem codes", () => {
  test("linked from the operator pages; the create form and an empty list", async () => {
    const c = await setup();
    const admin = await c.op.page("/console/admin");
    expect(admin.text).toContain('<a href="/console/admin/codes">Redeem codes</a>');
    const { status, text } = await c.op.page("/console/admin/codes");
    expect(status).toBe(200);
    expect(text).toContain('<a href="/console/admin/codes" aria-current="page">Redeem codes</a>');
    for (const name of ["amount", "currency", "count", "expires", "note"])
      expect(text).toContain(`name="${name}"`);
    expect(text).toContain('<button type="submit">Create codes</button>');
    expect(text).toContain("No batches yet.");
  });

  test("create: the codes shown once (copy, download as text), stored only as hashes; the table counts them", async () => {
    const c = await setup();
    const res = await c.op.post("/console/admin/codes", {
      amount: "5",
      currency: "USD",
      count: "3",
      expires: "2099-06-30",
      note: "<b>fair</b>",
    });
    // Post/redirect/get: the codes are shown once by the page the redirect leads to.
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/admin/codes?done=made");
    const text = (await c.op.page("/console/admin/codes?done=made")).text;
    const codes = [...new Set(text.match(CODE))];
    expect(codes).toHaveLength(3);
    expect(text).toContain('<label for="new-codes">New codes</label>');
    expect(text).toContain('data-copy="new-codes"');
    const href =
      /href="(data:text\/plain;charset=utf-8,[^"]+)" download="gengate-codes-(rbatch_\w+)\.txt"/.exec(text);
    expect(href).not.toBeNull();
    expect(decodeURIComponent(href![1]!.split(",")[1]!)).toBe(`${codes.join("\n")}\n`);
    expect(text).toContain("valid until 2099-07-01 00:00 UTC");
    expect(text).toContain("&lt;b&gt;fair&lt;/b&gt;");
    expect(text).not.toContain("<b>fair</b>");

    // The batch as the service sees it, made by this operator.
    const batch = await c.ctx.codes.getBatch(href![2]!);
    expect(batch).toMatchObject({ count: 3, unused: 3, note: "<b>fair</b>" });
    expect(batch.created_by).toMatch(/^person_/);

    // Reloading that page makes no second batch and shows no code, saying why.
    const reload = await c.op.page("/console/admin/codes?done=made");
    expect(reload.text.match(CODE)).toBeNull();
    expect(reload.text).toContain("shown once, when it was made");
    expect(await c.ctx.codes.listBatches(100)).toHaveLength(1);

    // Redeemed ones are counted; a later visit never shows the codes again.
    await c.ctx.codes.redeem(c.account.id, codes[0]!, c.keyId);
    const later = await c.op.page("/console/admin/codes");
    expect(later.text.match(CODE)).toBeNull();
    expect(later.text).toMatch(
      new RegExp(
        `<tr data-batch="${batch.id}">[\\s\\S]*?<td class="num">5.00 USD</td>\\s*<td class="num">3</td>\\s*<td class="num">1</td>\\s*<td class="num">2</td>`,
      ),
    );
  });

  test("bad input: 400 with the form kept and the message; nothing made", async () => {
    const c = await setup();
    for (const [fields, message] of [
      [{ amount: "0", currency: "USD", count: "1" }, "amount must be"],
      [{ amount: "1", currency: "EUR", count: "1" }, "currency must be"],
      [{ amount: "1", currency: "USD", count: "5000" }, "count must be"],
      [{ amount: "1", currency: "USD", count: "1", expires: "2001-01-01" }, "in the future"],
      [{ amount: "1", currency: "USD", count: "1", note: "n".repeat(600) }, "note must be"],
    ] as [Record<string, string>, string][]) {
      const res = await c.op.post("/console/admin/codes", fields);
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain(message);
      expect(text).toContain(`value="${fields.amount}"`);
    }
    expect(await c.ctx.codes.listBatches()).toEqual([]);
  });

  test("revoke unused: a dialog (and a confirmation page without JavaScript), then the count", async () => {
    const c = await setup();
    const { batch, codes } = await c.ctx.codes.createBatchFrom({ amount: "2", currency: "USD", count: 4 });
    await c.ctx.codes.redeem(c.account.id, codes[0]!, c.keyId);
    const { text } = await c.op.page("/console/admin/codes");
    expect(text).toContain(`data-dialog="revoke-${batch.id}"`);
    expect(text).toContain(`<dialog id="revoke-${batch.id}"`);
    const confirm = await c.op.page(`/console/admin/codes/${batch.id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain("3 code(s) not yet redeemed stop working at once.");
    expect(confirm.text).toContain('<button type="submit" class="danger">Revoke codes</button>');
    const res = await c.op.post(`/console/admin/codes/${batch.id}/revoke`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/admin/codes?revoked=3");
    const after = await c.op.page("/console/admin/codes?revoked=3");
    expect(after.text).toContain("3 unused code(s) revoked.");
    expect(after.text).not.toContain(`data-dialog="revoke-${batch.id}"`);
    expect(await c.ctx.codes.getBatch(batch.id)).toMatchObject({ redeemed: 1, revoked: 3, unused: 0 });
    expect((await c.op.page("/console/admin/codes/rbatch_nonexistent00000/revoke")).status).toBe(404);
    expect((await c.op.page("/console/admin/codes/junk/revoke")).status).toBe(404);
  });
});

describe("operator page: redeem codes, security", () => {
  test("anyone but an operator: 403 on the page and the actions, nothing made or revoked", async () => {
    const c = await setup();
    const { batch } = await c.ctx.codes.createBatchFrom({ amount: "2", currency: "USD", count: 2 });
    const owner = await c.signedIn("owner@example.com");
    await owner.page("/console/billing");
    expect((await owner.page("/console/admin/codes")).status).toBe(403);
    expect((await owner.page(`/console/admin/codes/${batch.id}/revoke`)).status).toBe(403);
    expect(
      (await owner.post("/console/admin/codes", { amount: "1", currency: "USD", count: "1" })).status,
    ).toBe(403);
    expect((await owner.post(`/console/admin/codes/${batch.id}/revoke`, {})).status).toBe(403);
    expect(await c.ctx.codes.listBatches()).toHaveLength(1);
    expect((await c.ctx.codes.getBatch(batch.id)).unused).toBe(2);
    const anonymous = await c.browser().get("/console/admin/codes");
    expect(anonymous.status).toBe(303);
  });

  test("an operator's action without the CSRF token or from another origin: 403, nothing changed", async () => {
    const c = await setup();
    const { batch } = await c.ctx.codes.createBatchFrom({ amount: "2", currency: "USD", count: 2 });
    const create = { amount: "1", currency: "USD", count: "1" };
    for (const opts of [{ csrf: null }, { csrf: "y".repeat(43) }, { origin: "https://evil.example" }]) {
      expect((await c.op.post("/console/admin/codes", create, opts)).status).toBe(403);
      expect((await c.op.post(`/console/admin/codes/${batch.id}/revoke`, {}, opts)).status).toBe(403);
    }
    expect(await c.ctx.codes.listBatches()).toHaveLength(1);
    expect((await c.ctx.codes.getBatch(batch.id)).unused).toBe(2);
  });
});
