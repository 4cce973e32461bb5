import { Elysia, t } from "elysia";
import { AccountSchema, KeySchema } from "../accounts/schemas.ts";
import { DecimalInput, decimalFromInput, idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import { createAccountWithKey, listAccountsPage, type OperatorDeps, showAccount } from "./operations.ts";
import { ACCOUNT_ID, AccountId, AdminAccount, PageOf } from "./schemas.ts";

const CreateAccountBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100 }),
    currency: t.Optional(t.Union([t.Literal("USD"), t.Literal("RUB")])),
    credit: t.Optional(DecimalInput),
  },
  { additionalProperties: false },
);

/** /admin/v1/accounts: list, create (with its Default key) and show accounts. */
export function adminAccountRoutes(s: OperatorDeps) {
  async function list({ query }: { query: { limit?: string; cursor?: string } }) {
    const { limit, cursor } = paging(query, idCursor(ACCOUNT_ID));
    return await listAccountsPage(s, limit, cursor);
  }

  async function create({ body, set }: { body: typeof CreateAccountBody.static; set: { status?: unknown } }) {
    const result = await createAccountWithKey(s, {
      name: body.name,
      currency: body.currency ?? "USD",
      creditMicro: body.credit === undefined ? null : decimalFromInput(body.credit, "credit"),
    });
    set.status = 201;
    return result;
  }

  async function show({ params }: { params: { id: string } }) {
    return await showAccount(s, params.id);
  }

  return new Elysia()
    .get("/accounts", list, {
      query: t.Object(PagingQuery),
      detail: { summary: "List accounts" },
      response: { 200: PageOf(AdminAccount), ...errors(400, 401) },
    })
    .post("/accounts", create, {
      body: CreateAccountBody,
      detail: {
        summary: "Create an account",
        description: "With its Default key (shown once) and an optional initial credit.",
      },
      response: {
        201: t.Object({ account: AdminAccount, key_id: t.String(), key: t.String() }),
        ...errors(400, 401, 409),
      },
    })
    .get("/accounts/:id", show, {
      params: AccountId,
      detail: {
        summary: "Get an account",
        description: "Balance, held, this month's spend and its keys (revoked ones included).",
      },
      response: {
        200: t.Composite([AccountSchema, t.Object({ keys: t.Array(KeySchema) })]),
        ...errors(400, 401, 404),
      },
    });
}
