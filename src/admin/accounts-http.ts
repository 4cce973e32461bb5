import { Elysia, t } from "elysia";
import { AccountSchema, KeySchema } from "../accounts/schemas.ts";
import { DecimalInput, decimalFromInput, idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import {
  type AccountStateDeps,
  createAccountWithKey,
  disableAccount,
  enableAccount,
  listAccountsPage,
  type OperatorDeps,
  showAccount,
} from "./operations.ts";
import { ACCOUNT_ID, AccountDisabledFields, AccountId, AdminAccount, PageOf, ReasonBody } from "./schemas.ts";

const CreateAccountBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100 }),
    currency: t.Optional(t.Union([t.Literal("USD"), t.Literal("RUB")])),
    credit: t.Optional(DecimalInput),
  },
  { additionalProperties: false },
);

/** /admin/v1/accounts: list, create (with its Default key), show, disable and enable accounts. */
export function adminAccountRoutes(s: OperatorDeps & AccountStateDeps) {
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

  async function disable({ params, body }: { params: { id: string }; body: { reason: string } }) {
    return await disableAccount(s, params.id, body.reason);
  }

  async function enable({ params }: { params: { id: string } }) {
    return await enableAccount(s, params.id);
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
        200: t.Composite([AccountSchema, t.Object({ ...AccountDisabledFields, keys: t.Array(KeySchema) })]),
        ...errors(400, 401, 404),
      },
    })
    .post("/accounts/:id/disable", disable, {
      params: AccountId,
      body: ReasonBody,
      detail: {
        summary: "Disable an account",
        description:
          "With a required reason (1 to 500 characters). From the next request on, on every instance, the account's keys are 401 unauthorized (the message says the account is disabled) and its console sessions end; its people cannot switch to it and its studio cannot run. Jobs already opened run to their end (their money is held). Disabling a disabled account keeps its time and takes the new reason.",
      },
      response: { 200: AdminAccount, ...errors(400, 401, 404) },
    })
    .post("/accounts/:id/enable", enable, {
      params: AccountId,
      detail: {
        summary: "Enable an account",
        description:
          "Its keys work again from the next request on. Enabling an enabled account changes nothing.",
      },
      response: { 200: AdminAccount, ...errors(400, 401, 404) },
    });
}
