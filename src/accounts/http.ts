import { Elysia, t } from "elysia";
import { requireManage, requirePrincipal } from "../auth/authenticate.ts";
import { microFromInput, paging, sequenceCursor } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import { parseMonth } from "../ledger/month.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import {
  AccountSchema,
  CreateKeyBody,
  KeyListSchema,
  KeySchema,
  LedgerPageSchema,
  LedgerQuery,
  NewKeySchema,
  refuseMisnamedKeyFields,
  SpendQuery,
  SpendSchema,
  UpdateKeyBody,
} from "./schemas.ts";
import { type KeyChanges, keyView } from "./store.ts";
import { accountBody } from "./summary.ts";

function keyChanges(body: {
  name?: string;
  monthly_limit_micro?: string | null;
  writes_per_minute?: number | null;
  max_in_flight?: number | null;
}): KeyChanges {
  return {
    name: body.name,
    monthlyLimitMicro:
      body.monthly_limit_micro === undefined || body.monthly_limit_micro === null
        ? body.monthly_limit_micro
        : microFromInput(body.monthly_limit_micro, "monthly_limit_micro"),
    writesPerMinute: body.writes_per_minute,
    maxInFlight: body.max_in_flight,
  };
}

/** The caller's own account: balance, wallet, spend and keys. */
export function accountRoutes(ctx: AppContext) {
  const KeyIdParams = t.Object({ id: t.String({ pattern: "^key_[0-9A-Za-z]{8,64}$" }) });
  return new Elysia({ prefix: "/v1", detail: { security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .get("/account", async ({ principal }) => await accountBody(ctx, principal.accountId), {
      detail: {
        tags: ["Account"],
        summary: "Get the account",
        description: "Currency, balance, held, available and this month's spend.",
      },
      response: { 200: AccountSchema, ...errors(401) },
    })
    .get(
      "/account/ledger",
      async ({ principal, query }) => {
        const page = paging(query, sequenceCursor);
        return await ctx.wallet.entries(principal.accountId, page.limit, page.cursor);
      },
      {
        query: LedgerQuery,
        detail: {
          tags: ["Account"],
          summary: "List wallet entries",
          description:
            "Every balance movement, newest first, labelled API, STUDIO or ADMIN. Page with ?cursor=next_cursor.",
        },
        response: { 200: LedgerPageSchema, ...errors(400, 401) },
      },
    )
    .get(
      "/account/spend",
      async ({ principal, query }) => {
        const month = query.month === undefined ? ctx.ledger.currentMonth() : parseMonth(query.month);
        if (!month)
          throw new DomainError("validation_error", `month must be YYYY-MM (got "${query.month}").`, {
            param: "month",
          });
        return await ctx.wallet.spend(principal.accountId, month);
      },
      {
        query: SpendQuery,
        detail: {
          tags: ["Account"],
          summary: "Get spend by key and model",
          description: "Charges of one calendar month (UTC).",
        },
        response: { 200: SpendSchema, ...errors(400, 401) },
      },
    )
    .get(
      "/keys",
      async ({ principal }) => ({ data: (await ctx.accounts.listKeys(principal.accountId)).map(keyView) }),
      {
        detail: {
          tags: ["Keys"],
          summary: "List keys",
          description: "Keys of the account, revoked ones included. Needs the manage right.",
        },
        beforeHandle: ({ principal }) => requireManage(principal),
        response: { 200: KeyListSchema, ...errors(401, 403) },
      },
    )
    .post(
      "/keys",
      async ({ principal, body, set }) => {
        const changes = keyChanges(body);
        const { keyId, key } = await ctx.accounts.createKey(principal.accountId, {
          name: changes.name ?? "Key",
          canManage: body.can_manage ?? false,
          monthlyLimitMicro: changes.monthlyLimitMicro,
          writesPerMinute: changes.writesPerMinute,
          maxInFlight: changes.maxInFlight,
        });
        set.status = 201;
        return { ...keyView(await ctx.accounts.getKey(principal.accountId, keyId)), key };
      },
      {
        body: CreateKeyBody,
        transform: refuseMisnamedKeyFields,
        beforeHandle: ({ principal }) => requireManage(principal),
        detail: {
          tags: ["Keys"],
          summary: "Create a key",
          description: "The key itself is in the response once. Needs the manage right.",
        },
        response: { 201: NewKeySchema, ...errors(400, 401, 403) },
      },
    )
    .patch(
      "/keys/:id",
      async ({ principal, params, body }) =>
        keyView(await ctx.accounts.updateKey(principal.accountId, params.id, keyChanges(body))),
      {
        params: KeyIdParams,
        body: UpdateKeyBody,
        transform: refuseMisnamedKeyFields,
        beforeHandle: ({ principal }) => requireManage(principal),
        detail: {
          tags: ["Keys"],
          summary: "Update a key",
          description: "Name, monthly limit (null = none), write rate and in-flight cap.",
        },
        response: { 200: KeySchema, ...errors(400, 401, 403, 404, 409) },
      },
    )
    .delete(
      "/keys/:id",
      async ({ principal, params }) => keyView(await ctx.accounts.revokeKey(principal.accountId, params.id)),
      {
        params: KeyIdParams,
        beforeHandle: ({ principal }) => requireManage(principal),
        detail: {
          tags: ["Keys"],
          summary: "Revoke a key",
          description: "Takes effect at once. The account's last manage key cannot be revoked (409).",
        },
        response: { 200: KeySchema, ...errors(401, 403, 404, 409) },
      },
    );
}
