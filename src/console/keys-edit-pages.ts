/**
 * One key's settings (/console/keys/:id/edit: name, monthly limit, write rate, requests in flight,
 * expiry, allowed models and addresses) and its Disable and Enable buttons, for a key this person
 * may manage (src/accounts/key-access.ts); written through AccountStore.updateKey, the API's own
 * method, so a change holds from the next API request on, on every instance.
 */
import { Elysia } from "elysia";
import { manageableKey } from "../accounts/key-access.ts";
import type { ApiKeyRow } from "../accounts/store.ts";
import { httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import type { SafeHtml } from "../lib/html.ts";
import { type KeyForm, keyFormChanges, keyFormOf } from "./keys-shared.ts";
import { editBody } from "./keys-view.ts";
import {
  type AccountSession,
  type ActionContext,
  type ConsoleKit,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
} from "./kit.ts";

async function editPage(
  kit: ConsoleKit,
  c: PageContext,
  s: AccountSession,
  key: ApiKeyRow,
  error: string | null = null,
  typed?: KeyForm,
): Promise<SafeHtml> {
  const currency = (await kit.ctx.accounts.getAccount(s.accountId))!.currency;
  return c.layout({
    title: `Edit ${key.name}`,
    active: "keys",
    body: editBody(s, key, currency, error, typed),
  });
}

async function showEdit(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  return await editPage(kit, c, s, await manageableKey(kit.ctx, s, c.params.id));
}

/** A refusal the person can fix (bad input, a revoked key) re-shows the form with what was typed. */
const FIXABLE = ["validation_error", "conflict"];

async function saveEdit(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const key = await manageableKey(kit.ctx, s, c.params.id);
  const typed = keyFormOf(c.form);
  try {
    await kit.ctx.accounts.updateKey(s.accountId, key.id, keyFormChanges(c.form, typed));
  } catch (err) {
    if (!(err instanceof DomainError) || !FIXABLE.includes(err.code)) throw err;
    return htmlResponse(await editPage(kit, c, s, key, err.message, typed), httpStatus(err.code));
  }
  return redirect("/console/keys?done=saved");
}

async function setDisabled(c: ActionContext, kit: ConsoleKit, disabled: boolean): Promise<Response> {
  const s = requireAccount(c.session);
  const key = await manageableKey(kit.ctx, s, c.params.id);
  await kit.ctx.accounts.updateKey(s.accountId, key.id, { disabled });
  return redirect(`/console/keys?done=${disabled ? "disabled" : "enabled"}`);
}

export function keysEditPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/keys/:id/edit",
      kit.page((c) => showEdit(c, kit)),
    )
    .post(
      "/console/keys/:id/edit",
      kit.action((c) => saveEdit(c, kit)),
    )
    .post(
      "/console/keys/:id/disable",
      kit.action((c) => setDisabled(c, kit, true)),
    )
    .post(
      "/console/keys/:id/enable",
      kit.action((c) => setDisabled(c, kit, false)),
    );
}
