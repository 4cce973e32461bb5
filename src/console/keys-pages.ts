/**
 * Keys (`/console/keys`): the list (from keyFigures, the overview's numbers), create (post/redirect/
 * get: the key is kept for the session as a one-time flash, shown once by the page the redirect
 * leads to and cleared as it is shown; never in a URL, never cached; a reload creates nothing and
 * shows nothing), edit and disable (keys-edit-pages.ts), revoke after a confirmation (a <dialog>;
 * without JavaScript a confirmation page).
 * Writes go through the API's own AccountStore methods (createKey, updateKey, revokeKey: the last
 * manage key rule, the principal cache cleared at once) and its input rules (decimalFromInput,
 * KEY_NAME_MAX_LENGTH). Owners manage every key; members create keys and manage the ones they
 * created (created_by); another account's key id is 404.
 */
import { Elysia } from "elysia";
import { manageableKey } from "../accounts/key-access.ts";
import { keyFigures } from "../ledger/figures.ts";
import { DomainError } from "../lib/errors.ts";
import type { SafeHtml } from "../lib/html.ts";
import { keysEditPages } from "./keys-edit-pages.ts";
import { keyFormChanges, keyFormOf, keyName } from "./keys-shared.ts";
import { type KeysState, keysBody, revokeBody } from "./keys-view.ts";
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

const DONE: Record<string, string> = {
  created: "The key was created. It was shown once and cannot be shown again.",
  saved: "The key's settings are saved; the API applies them from the next request on.",
  disabled: "The key is disabled: the API refuses it until it is enabled again.",
  enabled: "The key is enabled again.",
  revoked: "The key is revoked: the API refuses it from now on.",
};

async function keysPage(
  kit: ConsoleKit,
  c: PageContext,
  s: AccountSession,
  state: KeysState = {},
): Promise<SafeHtml> {
  const account = (await kit.ctx.accounts.getAccount(s.accountId))!;
  const rows = new Map((await kit.ctx.accounts.listKeys(s.accountId)).map((k) => [k.id, k]));
  const figures = await keyFigures(kit.ctx, s.accountId);
  return c.layout({
    title: "Keys",
    active: "keys",
    body: keysBody(s, account.currency, figures, rows, state),
  });
}

/** The flash kind of a created key (src/people/sessions.ts setFlash). */
const NEW_KEY = "new-key";

async function showKeys(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const created = await kit.people.sessions.takeFlash<{ name: string; key: string }>(s.sessionId, NEW_KEY);
  const done = c.url.searchParams.get("done") ?? "";
  // The key itself replaces the notice; a reload finds no flash and says the key was shown.
  return await keysPage(kit, c, s, { created, notice: created ? null : (DONE[done] ?? null) });
}

async function createKey(c: ActionContext, kit: ConsoleKit): Promise<SafeHtml | Response> {
  const s = requireAccount(c.session);
  const form = keyFormOf(c.form);
  try {
    const changes = keyFormChanges(c.form, form);
    const name = keyName(form.name);
    const { key } = await kit.ctx.accounts.createKey(s.accountId, {
      ...changes,
      name,
      canManage: s.role === "owner" && field(c.form, "manage") === "1",
      createdBy: s.personId,
    });
    await kit.people.sessions.setFlash(s.sessionId, NEW_KEY, { name, key });
    return redirect("/console/keys?done=created");
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== "validation_error") throw err;
    return htmlResponse(await keysPage(kit, c, s, { error: err.message, form }), 400);
  }
}

async function confirmRevoke(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const key = await manageableKey(kit.ctx, s, c.params.id);
  return c.layout({ title: "Revoke key", active: "keys", body: revokeBody(s, key) });
}

async function revokeKey(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const key = await manageableKey(kit.ctx, s, c.params.id);
  try {
    await kit.ctx.accounts.revokeKey(s.accountId, key.id);
  } catch (err) {
    // The account's last manage key: the service's own message, on the keys page.
    if (!(err instanceof DomainError) || err.code !== "conflict") throw err;
    return htmlResponse(await keysPage(kit, c, s, { error: err.message }), 409);
  }
  return redirect("/console/keys?done=revoked");
}

export function keysPages(kit: ConsoleKit) {
  return (
    new Elysia()
      .use(keysEditPages(kit))
      .get(
        "/console/keys",
        kit.page((c) => showKeys(c, kit)),
      )
      .post(
        "/console/keys",
        kit.action((c) => createKey(c, kit)),
      )
      // ---- revoke (the confirmation page is what `Revoke` leads to without JavaScript)
      .get(
        "/console/keys/:id/revoke",
        kit.page((c) => confirmRevoke(c, kit)),
      )
      .post(
        "/console/keys/:id/revoke",
        kit.action((c) => revokeKey(c, kit)),
      )
  );
}
