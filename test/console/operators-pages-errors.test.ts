/**
 * The operator pages of issue 34, refused: Create account keeps the form and creates nothing; a key
 * of another account through an account's path is 404 and stays live.
 */
import { describe, expect, test } from "bun:test";
import { operatorSetup as setup } from "./operators-setup.ts";

describe("refusals", () => {
  test("refused: the list again with the form kept and the reason; nothing created", async () => {
    const { c, op } = await setup();
    const before = (await c.ctx.accounts.listAccounts(100, null)).length;
    const cases: [Record<string, string>, number, string][] = [
      [{ name: "", currency: "USD", email: "" }, 400, "Name must be"],
      [{ name: "x".repeat(101), currency: "USD", email: "" }, 400, "Name must be"],
      [{ name: "Typo", currency: "EUR", email: "" }, 400, "Currency must be"],
      [{ name: "Typo", currency: "USD", email: "not an email" }, 400, "valid email"],
      [
        { name: (await c.ctx.accounts.getAccount(c.account.id))!.name, currency: "USD", email: "" },
        409,
        "already exists",
      ],
    ];
    for (const [form, status, message] of cases) {
      const res = await op.post("/console/admin/accounts", form);
      expect(res.status).toBe(status);
      const text = await res.text();
      expect(text).toContain(message);
      if (form.email) expect(text).toContain(`value="${form.email}"`);
    }
    expect((await c.ctx.accounts.listAccounts(100, null)).length).toBe(before);
  });
  test("another account's key through this account's path is 404 and stays live", async () => {
    const { c, op, estimate } = await setup();
    const other = await c.ctx.accounts.createAccount("Other", "USD");
    const path = `/console/admin/accounts/${c.account.id}/keys/${other.keyId}/revoke`;
    expect((await op.page(path)).status).toBe(404);
    expect((await op.post(path, {})).status).toBe(404);
    expect((await estimate(other.key)).status).toBe(200);
  });
});
