/**
 * A key's monthly limit (/console/keys/:id/limit): the form and its save, for a key this person may
 * manage (src/accounts/key-access.ts); written through AccountStore.updateKey, the API's own method.
 */
import { Elysia } from "elysia";
import { manageableKey } from "../accounts/key-access.ts";
import type { ApiKeyRow } from "../accounts/store.ts";
import { httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import type { SafeHtml } from "../lib/html.ts";
import { limitInput } from "./keys-shared.ts";
import { limitBody } from "./keys-view.ts";
import {
  type AccountSession,
  type ActionContext,
  type ConsoleKit,
  field,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
} from "./kit.ts";

async function limitPage(
  kit: ConsoleKit,
  c: PageContext,
  s: AccountSession,
  key: ApiKeyRow,
  error: string | null = null,
  value?: string,
): Promise<SafeHtml> {
  const currency = (await kit.ctx.accounts.getAccount(s.accountId))!.currency;
  return c.layout({
    title: "Change limit",
    active: "keys",
    body: limitBody(s, key, currency, error, value),
  });
}

async function showLimit(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  return await limitPage(kit, c, s, await manageableKey(kit.ctx, s, c.params.id));
}

async function saveLimit(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const key = await manageableKey(kit.ctx, s, c.params.id);
  const text = field(c.form, "monthly_limit");
  try {
    await kit.ctx.accounts.updateKey(s.accountId, key.id, { monthlyLimitMicro: limitInput(text) });
  } catch (err) {
    if (!(err instanceof DomainError) || !["validation_error", "conflict"].includes(err.code)) throw err;
    return htmlResponse(await limitPage(kit, c, s, key, err.message, text), httpStatus(err.code));
  }
  return redirect("/console/keys?done=limit");
}

export function keysLimitPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/keys/:id/limit",
      kit.page((c) => showLimit(c, kit)),
    )
    .post(
      "/console/keys/:id/limit",
      kit.action((c) => saveLimit(c, kit)),
    );
}
