import { Elysia, t } from "elysia";
import { requireManage, requirePrincipal } from "../auth/authenticate.ts";
import { microFromInput } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import { type KeyControlsInput, keyControlsOf } from "./key-controls.ts";
import {
  CreateKeyBody,
  KeyListSchema,
  KeySchema,
  NewKeySchema,
  refuseMisnamedKeyFields,
  UpdateKeyBody,
} from "./schemas.ts";
import { type KeyChanges, keyView, type Principal } from "./store.ts";

/** A key body of the API (and the admin API's): every setting optional, undefined = unchanged. */
export interface KeyBody extends KeyControlsInput {
  name?: string;
  disabled?: boolean;
  monthly_limit_micro?: string | null;
  writes_per_minute?: number | null;
  max_in_flight?: number | null;
}

/** The body's settings checked and made the store's (bad figures and controls are 400). */
export function keyChanges(body: KeyBody): KeyChanges {
  return {
    name: body.name,
    monthlyLimitMicro:
      body.monthly_limit_micro === undefined || body.monthly_limit_micro === null
        ? body.monthly_limit_micro
        : microFromInput(body.monthly_limit_micro, "monthly_limit_micro"),
    writesPerMinute: body.writes_per_minute,
    maxInFlight: body.max_in_flight,
    disabled: body.disabled,
    ...keyControlsOf(body),
  };
}

/** What the key handlers use: the accounts store, which owns the keys. */
type KeyDeps = Pick<AppContext, "accounts">;

async function listKeys(ctx: KeyDeps, principal: Principal) {
  return { data: (await ctx.accounts.listKeys(principal.accountId)).map(keyView) };
}

async function createKey(ctx: KeyDeps, principal: Principal, body: KeyBody & { can_manage?: boolean }) {
  const changes = keyChanges(body);
  const { keyId, key } = await ctx.accounts.createKey(principal.accountId, {
    ...changes,
    name: changes.name ?? "Key",
    canManage: body.can_manage ?? false,
  });
  return { ...keyView(await ctx.accounts.getKey(principal.accountId, keyId)), key };
}

async function updateKey(ctx: KeyDeps, principal: Principal, id: string, body: KeyBody) {
  return keyView(await ctx.accounts.updateKey(principal.accountId, id, keyChanges(body)));
}

async function revokeKey(ctx: KeyDeps, principal: Principal, id: string) {
  return keyView(await ctx.accounts.revokeKey(principal.accountId, id));
}

/** The account's API keys (/v1/keys): every route needs the manage right. */
export function keyRoutes(ctx: AppContext) {
  const KeyIdParams = t.Object({ id: t.String({ pattern: "^key_[0-9A-Za-z]{8,64}$" }) });
  return new Elysia({ prefix: "/v1", detail: { security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .get("/keys", ({ principal }) => listKeys(ctx, principal), {
      detail: {
        tags: ["Keys"],
        summary: "List keys",
        description: "Keys of the account, revoked ones included. Needs the manage right.",
      },
      beforeHandle: ({ principal }) => requireManage(principal),
      response: { 200: KeyListSchema, ...errors(401, 403) },
    })
    .post(
      "/keys",
      async ({ principal, body, set }) => {
        const made = await createKey(ctx, principal, body);
        set.status = 201;
        return made;
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
    .patch("/keys/:id", ({ principal, params, body }) => updateKey(ctx, principal, params.id, body), {
      params: KeyIdParams,
      body: UpdateKeyBody,
      transform: refuseMisnamedKeyFields,
      beforeHandle: ({ principal }) => requireManage(principal),
      detail: {
        tags: ["Keys"],
        summary: "Update a key",
        description:
          "Name, monthly limit (null = none), write rate, in-flight cap, expiry, allowed models and addresses, and disabled. Applies from the next request on, on every instance.",
      },
      response: { 200: KeySchema, ...errors(400, 401, 403, 404, 409) },
    })
    .delete("/keys/:id", ({ principal, params }) => revokeKey(ctx, principal, params.id), {
      params: KeyIdParams,
      beforeHandle: ({ principal }) => requireManage(principal),
      detail: {
        tags: ["Keys"],
        summary: "Revoke a key",
        description: "Takes effect at once. The account's last manage key cannot be revoked (409).",
      },
      response: { 200: KeySchema, ...errors(401, 403, 404, 409) },
    });
}
