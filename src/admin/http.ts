import { Elysia, t } from "elysia";
import { accountView } from "../accounts/accounts.ts";
import {
  AccountSchema,
  KeyListSchema,
  KeySchema,
  LedgerPageSchema,
  LedgerQuery,
  refuseMisnamedKeyFields,
} from "../accounts/schemas.ts";
import { requireAdmin } from "../auth/authenticate.ts";
import { fxView, isFxCurrency } from "../fx/rates.ts";
import {
  DecimalInput,
  decimalFromInput,
  idCursor,
  MicroInput,
  microFromInput,
  PagingQuery,
  paging,
  sequenceCursor,
} from "../http/inputs.ts";
import { errors, MicroString } from "../http/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import { rfc3339 } from "../lib/time.ts";
import type { InviteView, PersonView } from "../people/service.ts";
import { circuitFor } from "../providers/registry.ts";
import type { AppContext } from "../server/context.ts";
import {
  adjustAccount,
  createAccountWithKey,
  createKeyFor,
  creditAccount,
  listAccountKeys,
  requireAccount,
  revokeKeyAsOperator,
  setFxRate,
  showAccount,
} from "./operations.ts";

const AdminAccount = t.Omit(AccountSchema, ["month", "month_spent_micro"]);
const FxSchema = t.Object(
  {
    currency: t.String(),
    rate_micro: MicroString("micro-units of the currency per 1 USD"),
    source: t.String(),
    updated_at: t.Union([t.String(), t.Null()]),
  },
  { title: "FxRate" },
);
const ACCOUNT_ID = /^acct_[0-9A-Za-z]{8,64}$/;
const AccountId = t.Object({ id: t.String({ pattern: ACCOUNT_ID.source }) });
const KeyId = t.Object({ id: t.String({ pattern: "^key_[0-9A-Za-z]{8,64}$" }) });
const AdminKey = t.Composite([KeySchema, t.Object({ account_id: t.String() })], { title: "AdminApiKey" });
const Nullable = <S extends Awaited<ReturnType<typeof t.String>>>(s: S) => t.Union([s, t.Null()]);
const RoleSchema = t.Union([t.Literal("owner"), t.Literal("member")]);
const PersonSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal("person"),
    email: t.String(),
    operator: t.Boolean(),
    two_factor: t.Boolean(),
    has_password: t.Boolean({ description: "false until the person has accepted an invite." }),
    created_at: t.String(),
    disabled_at: Nullable(t.String()),
    memberships: t.Array(t.Object({ account_id: t.String(), role: RoleSchema })),
  },
  { title: "Person" },
);
const MailedSchema = t.Boolean({
  description: "Whether the link was also queued for email ([smtp] configured; docs/billing.md).",
});

const InviteSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal("invite"),
    email: Nullable(t.String()),
    account_id: Nullable(t.String({ description: "null: accepting creates a new account." })),
    role: RoleSchema,
    operator: t.Boolean(),
    created_by: Nullable(
      t.String({ description: "The person who made it; null: the operator (CLI, admin API)." }),
    ),
    created_at: t.String(),
    expires_at: t.String(),
    used_at: Nullable(t.String()),
    used_by: Nullable(t.String()),
    revoked_at: Nullable(t.String()),
    state: t.Union([t.Literal("pending"), t.Literal("used"), t.Literal("revoked"), t.Literal("expired")]),
  },
  { title: "Invite" },
);
const PERSON_ID = /^person_[0-9A-Za-z]{8,64}$/;
const INVITE_ID = /^inv_[0-9A-Za-z]{8,64}$/;

function personView(p: PersonView) {
  return {
    id: p.id,
    object: "person" as const,
    email: p.email,
    operator: p.operator,
    two_factor: p.twoFactor,
    has_password: p.hasPassword,
    created_at: rfc3339(p.createdAt)!,
    disabled_at: rfc3339(p.disabledAt),
    memberships: p.memberships.map((m) => ({ account_id: m.accountId, role: m.role })),
  };
}

function inviteView(i: InviteView) {
  return {
    id: i.id,
    object: "invite" as const,
    email: i.email,
    account_id: i.accountId,
    role: i.role,
    operator: i.operator,
    created_by: i.createdBy,
    created_at: rfc3339(i.createdAt)!,
    expires_at: rfc3339(i.expiresAt)!,
    used_at: rfc3339(i.usedAt),
    used_by: i.usedBy,
    revoked_at: rfc3339(i.revokedAt),
    state: i.state,
  };
}

/** The operator API under /admin/v1, behind the admin token. */
export function adminRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/admin/v1", detail: { tags: ["Admin"], security: [{ adminToken: [] }] } })
    .onTransform(({ request }) => {
      // Transform runs before validation: an unauthenticated caller learns nothing about bodies.
      requireAdmin(ctx, request);
    })
    .get(
      "/accounts",
      async ({ query }) => {
        const { limit, cursor } = paging(query, idCursor(ACCOUNT_ID));
        const rows = await ctx.accounts.listAccounts(limit + 1, cursor);
        const page = rows.slice(0, limit);
        return {
          data: page.map(accountView),
          next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
        };
      },
      {
        query: t.Object(PagingQuery),
        detail: { summary: "List accounts" },
        response: {
          200: t.Object({ data: t.Array(AdminAccount), next_cursor: t.Union([t.String(), t.Null()]) }),
          ...errors(400, 401),
        },
      },
    )
    .post(
      "/accounts",
      async ({ body, set }) => {
        const result = await createAccountWithKey(ctx, {
          name: body.name,
          currency: body.currency ?? "USD",
          creditMicro: body.credit === undefined ? null : decimalFromInput(body.credit, "credit"),
        });
        set.status = 201;
        return result;
      },
      {
        body: t.Object(
          {
            name: t.String({ minLength: 1, maxLength: 100 }),
            currency: t.Optional(t.Union([t.Literal("USD"), t.Literal("RUB")])),
            credit: t.Optional(DecimalInput),
          },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Create an account",
          description: "With its Default key (shown once) and an optional initial credit.",
        },
        response: {
          201: t.Object({ account: AdminAccount, key_id: t.String(), key: t.String() }),
          ...errors(400, 401, 409),
        },
      },
    )
    .get("/accounts/:id", async ({ params }) => await showAccount(ctx, params.id), {
      params: AccountId,
      detail: {
        summary: "Get an account",
        description: "Balance, held, this month's spend and its keys (revoked ones included).",
      },
      response: {
        200: t.Composite([AccountSchema, t.Object({ keys: t.Array(KeySchema) })]),
        ...errors(400, 401, 404),
      },
    })
    .get("/accounts/:id/keys", async ({ params }) => ({ data: await listAccountKeys(ctx, params.id) }), {
      params: AccountId,
      detail: {
        summary: "List an account's keys",
        description: "Every key of the account, revoked ones included (never the key itself).",
      },
      response: { 200: KeyListSchema, ...errors(400, 401, 404) },
    })
    .delete("/keys/:id", async ({ params }) => await revokeKeyAsOperator(ctx, params.id), {
      params: KeyId,
      detail: {
        summary: "Revoke a key",
        description:
          "Any account's key, at once: the next request with it is 401. Unlike DELETE /v1/keys/{id}, the operator may revoke an account's last manage key (give the account a new one with POST /admin/v1/accounts/{id}/keys and can_manage). Revoking a revoked key returns it unchanged.",
      },
      response: { 200: AdminKey, ...errors(400, 401, 404) },
    })
    .get(
      "/accounts/:id/ledger",
      async ({ params, query }) => {
        await requireAccount(ctx, params.id);
        const page = paging(query, sequenceCursor);
        return await ctx.wallet.entries(params.id, page.limit, page.cursor);
      },
      {
        params: AccountId,
        query: LedgerQuery,
        detail: { summary: "List an account's wallet" },
        response: { 200: LedgerPageSchema, ...errors(400, 401, 404) },
      },
    )
    .post(
      "/accounts/:id/credit",
      async ({ params, body }) =>
        await creditAccount(ctx, params.id, decimalFromInput(body.amount, "amount"), body.reason),
      {
        params: AccountId,
        body: t.Object(
          { amount: DecimalInput, reason: t.String({ minLength: 1, maxLength: 500 }) },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Credit an account",
          description:
            "amount: decimal in the account currency, above 0. reason: required, recorded on the ADMIN ledger entry (the customer sees it in the wallet). A credit that would take the balance above the maximum balance (1000000000000.00, max_balance_micro in the error) is 400 validation_error.",
        },
        response: { 200: AdminAccount, ...errors(400, 401, 404) },
      },
    )
    .post(
      "/accounts/:id/adjust",
      async ({ params, body }) =>
        await adjustAccount(ctx, params.id, decimalFromInput(body.amount, "amount", true), body.reason),
      {
        params: AccountId,
        body: t.Object(
          { amount: DecimalInput, reason: t.String({ minLength: 1, maxLength: 500 }) },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Adjust a balance",
          description:
            "Signed correction with a reason. It may not leave less than the amount held by open jobs (409), nor take the balance above the maximum balance (400 validation_error naming it).",
        },
        response: { 200: AdminAccount, ...errors(400, 401, 404, 409) },
      },
    )
    .post(
      "/accounts/:id/keys",
      async ({ params, body, set }) => {
        await requireAccount(ctx, params.id);
        set.status = 201;
        return createKeyFor(ctx, params.id, {
          name: body.name,
          canManage: body.can_manage,
          monthlyLimitMicro: body.monthly_limit_micro
            ? microFromInput(body.monthly_limit_micro, "monthly_limit_micro")
            : null,
        });
      },
      {
        params: AccountId,
        transform: refuseMisnamedKeyFields,
        body: t.Object(
          {
            name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
            monthly_limit_micro: t.Optional(MicroInput),
            can_manage: t.Optional(t.Boolean()),
          },
          { additionalProperties: false },
        ),
        detail: { summary: "Create a key for an account" },
        response: {
          201: t.Composite([KeySchema, t.Object({ key_id: t.String(), key: t.String() })]),
          ...errors(400, 401, 404),
        },
      },
    )
    .post(
      "/users/invite",
      async ({ body, set }) => {
        const invite = await ctx.people.createInvite({
          email: body.email,
          accountId: body.account_id ?? null,
          role: body.role,
          operator: body.operator ?? false,
        });
        set.status = 201;
        return { url: invite.url, expires_at: rfc3339(invite.expiresAt)!, mailed: invite.mailed };
      },
      {
        body: t.Object(
          {
            email: t.String({ minLength: 3, maxLength: 254 }),
            account_id: t.Optional(t.String({ pattern: ACCOUNT_ID.source })),
            role: t.Optional(RoleSchema),
            operator: t.Optional(t.Boolean()),
          },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Invite a person to the console",
          description:
            "A one-time link `{public_url}/console/invite/<token>`, valid 7 days, where the person sets a password (an existing person confirms with theirs). Without account_id, accepting creates a new account (its Default key shown once) with the person as owner; with it, the person joins that account with role (default member). operator: the person also gets the operator pages. Sign-up mode closed still accepts these (they are operator-made). Only the link's SHA-256 is stored: it cannot be shown again. With [smtp] configured the link is also mailed to `email` (mailed: true).",
        },
        response: {
          201: t.Object({ url: t.String(), expires_at: t.String(), mailed: MailedSchema }),
          ...errors(400, 401, 404),
        },
      },
    )
    .post(
      "/users/reset-password",
      async ({ body }) => {
        const reset = await ctx.people.requestPasswordReset(body.email);
        if (!reset) throw new DomainError("not_found", "No person with this email.", { param: "email" });
        return { url: reset.url, mailed: reset.mailed };
      },
      {
        body: t.Object(
          { email: t.String({ minLength: 1, maxLength: 254 }) },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Make a password reset link",
          description:
            "A one-time link `{public_url}/console/reset/<token>`, valid 1 hour. Setting a new password through it signs the person out everywhere. An unknown email is 404 here (the operator may know); the console's own reset page never tells. With [smtp] configured the link is also mailed to the person's email (mailed: true).",
        },
        response: { 200: t.Object({ url: t.String(), mailed: MailedSchema }), ...errors(400, 401, 404) },
      },
    )
    .get(
      "/people",
      async ({ query }) => {
        const { limit, cursor } = paging(query, idCursor(PERSON_ID));
        const rows = await ctx.people.listPeople({ limit: limit + 1, after: cursor });
        const page = rows.slice(0, limit);
        return {
          data: page.map(personView),
          next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
        };
      },
      {
        query: t.Object(PagingQuery),
        detail: {
          summary: "List console people",
          description:
            "Oldest first, each with their memberships (account and role). Never a password or secret.",
        },
        response: {
          200: t.Object({ data: t.Array(PersonSchema), next_cursor: t.Union([t.String(), t.Null()]) }),
          ...errors(400, 401),
        },
      },
    )
    .get(
      "/invites",
      async ({ query }) => {
        const { limit, cursor } = paging(query, idCursor(INVITE_ID));
        const rows = await ctx.people.listInvites({ limit: limit + 1, after: cursor });
        const page = rows.slice(0, limit);
        return {
          data: page.map(inviteView),
          next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
        };
      },
      {
        query: t.Object(PagingQuery),
        detail: {
          summary: "List invites",
          description:
            "Newest first, with their state (pending, used, revoked, expired). The links themselves are never stored.",
        },
        response: {
          200: t.Object({ data: t.Array(InviteSchema), next_cursor: t.Union([t.String(), t.Null()]) }),
          ...errors(400, 401),
        },
      },
    )
    .delete(
      "/invites/:id",
      async ({ params }) => {
        await ctx.people.revokeInvite(params.id);
        return inviteView((await ctx.people.getInvite(params.id))!);
      },
      {
        params: t.Object({ id: t.String({ pattern: INVITE_ID.source }) }),
        detail: {
          summary: "Revoke an invite",
          description: "An unused invite stops working at once; a used or unknown one is 404.",
        },
        response: { 200: InviteSchema, ...errors(400, 401, 404) },
      },
    )
    .get(
      "/providers",
      () => ({
        data: Object.entries(ctx.live.providers).map(([name, p]) => ({
          name,
          type: p.type,
          base_url: p.baseUrl,
          models: ctx.catalog.models.filter((m) => m.provider === name).map((m) => m.id),
          ...circuitFor(ctx.circuits, name).view(),
        })),
      }),
      {
        detail: {
          summary: "List upstream providers",
          description: "Configuration (never keys) and health of each provider.",
        },
        response: {
          200: t.Object({
            data: t.Array(
              t.Object({
                name: t.String(),
                type: t.String(),
                base_url: t.String(),
                models: t.Array(t.String()),
                state: t.String(),
                consecutive_failures: t.Integer(),
                healthy: t.Boolean(),
              }),
            ),
          }),
          ...errors(401),
        },
      },
    )
    .get("/fx", async () => ({ data: (await ctx.fx.list()).map(fxView) }), {
      detail: { summary: "List exchange rates" },
      response: { 200: t.Object({ data: t.Array(FxSchema) }), ...errors(401) },
    })
    .put(
      "/fx/:currency",
      async ({ params, body }) => {
        if (!isFxCurrency(params.currency)) {
          throw new DomainError("validation_error", `currency must be RUB (got "${params.currency}").`, {
            param: "currency",
          });
        }
        return await setFxRate(ctx, params.currency, body.rate, "admin");
      },
      {
        params: t.Object({ currency: t.String({ maxLength: 8 }) }),
        body: t.Object(
          { rate: t.String({ description: 'Units of the currency per 1 USD, e.g. "92.5".' }) },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Set an exchange rate",
          description: "New reservations use it; open holds keep their rate.",
        },
        response: { 200: FxSchema, ...errors(400, 401) },
      },
    );
}
