import { Elysia, t } from "elysia";
import { LedgerPageSchema, LedgerQuery } from "../accounts/schemas.ts";
import { DecimalInput, decimalFromInput, paging, sequenceCursor } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import { adjustAccount, creditAccount, type OperatorDeps, requireAccount } from "./operations.ts";
import { AccountId, AdminAccount } from "./schemas.ts";

const MoneyBody = t.Object(
  { amount: DecimalInput, reason: t.String({ minLength: 1, maxLength: 500 }) },
  { additionalProperties: false },
);
type MoneyRequest = { params: { id: string }; body: typeof MoneyBody.static };

/** An account's wallet and the operator's money changes: credits and signed adjustments (ADMIN). */
export function adminMoneyRoutes(s: OperatorDeps) {
  async function ledger({ params, query }: { params: { id: string }; query: typeof LedgerQuery.static }) {
    // An unknown account is 404 before the paging is checked.
    await requireAccount(s, params.id);
    const page = paging(query, sequenceCursor);
    return await s.wallet.entries(params.id, page.limit, page.cursor);
  }

  async function credit({ params, body }: MoneyRequest) {
    return await creditAccount(s, params.id, decimalFromInput(body.amount, "amount"), body.reason);
  }

  async function adjust({ params, body }: MoneyRequest) {
    return await adjustAccount(s, params.id, decimalFromInput(body.amount, "amount", true), body.reason);
  }

  return new Elysia()
    .get("/accounts/:id/ledger", ledger, {
      params: AccountId,
      query: LedgerQuery,
      detail: { summary: "List an account's wallet" },
      response: { 200: LedgerPageSchema, ...errors(400, 401, 404) },
    })
    .post("/accounts/:id/credit", credit, {
      params: AccountId,
      body: MoneyBody,
      detail: {
        summary: "Credit an account",
        description:
          "amount: decimal in the account currency, above 0. reason: required, recorded on the ADMIN ledger entry (the customer sees it in the wallet). A credit that would take the balance above the maximum balance (1000000000000.00, max_balance_micro in the error) is 400 validation_error.",
      },
      response: { 200: AdminAccount, ...errors(400, 401, 404) },
    })
    .post("/accounts/:id/adjust", adjust, {
      params: AccountId,
      body: MoneyBody,
      detail: {
        summary: "Adjust a balance",
        description:
          "Signed correction with a reason. It may not leave less than the amount held by open jobs (409), nor take the balance above the maximum balance (400 validation_error naming it).",
      },
      response: { 200: AdminAccount, ...errors(400, 401, 404, 409) },
    });
}
