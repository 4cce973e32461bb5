/**
 * Keys (`/console/keys`): the list (from keyFigures, the overview's numbers), create (the key is
 * shown once, in the answer to the POST: never stored, never in a URL, never cached), change a
 * monthly limit, revoke after a confirmation (a <dialog>; without JavaScript a confirmation page).
 * Writes go through the API's own AccountStore methods (createKey, updateKey, revokeKey: the last
 * manage key rule, the principal cache cleared at once) and its input rules (decimalFromInput,
 * KEY_NAME_MAX_LENGTH). Owners manage every key; members create keys and manage the ones they
 * created (created_by); another account's key id is 404.
 */
import { Elysia } from "elysia";
import { KEY_NAME_MAX_LENGTH } from "../accounts/schemas.ts";
import type { ApiKeyRow } from "../accounts/store.ts";
import { httpStatus } from "../http/errors.ts";
import { decimalFromInput } from "../http/inputs.ts";
import { type KeyFigures, keyFigures } from "../ledger/figures.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro } from "../lib/money.ts";
import {
  type AccountSession,
  type ConsoleKit,
  field,
  formError,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
} from "./kit.ts";
import { csrfField } from "./layout.ts";
import { money, tableBox, when } from "./money-view.ts";

const KEY_ID = /^key_[0-9A-Za-z]{8,64}$/;

const DONE: Record<string, string> = {
  limit: "The monthly limit is saved.",
  revoked: "The key is revoked: the API refuses it from now on.",
};

/** The key behind a route's :id, of the session's account (404 otherwise), that this person may manage (403). */
async function manageableKey(kit: ConsoleKit, s: AccountSession, id: string | undefined): Promise<ApiKeyRow> {
  if (!id || !KEY_ID.test(id)) throw new DomainError("not_found", "There is no such key in this account.");
  const key = await kit.ctx.accounts.getKey(s.accountId, id);
  if (!mayManage(s, key)) {
    throw new DomainError("forbidden", "Members can change only the keys they created; ask an owner.");
  }
  return key;
}

function mayManage(s: AccountSession, key: ApiKeyRow): boolean {
  return s.role === "owner" || key.created_by === s.personId;
}

/** "" -> null (no limit); otherwise the API's decimal rule (at most 6 places, not negative). */
function limitInput(text: string): bigint | null {
  const t = text.trim();
  return t === "" ? null : decimalFromInput(t, "Monthly limit");
}

function keyName(text: string): string {
  const name = text.trim();
  if (name.length < 1 || name.length > KEY_NAME_MAX_LENGTH) {
    throw new DomainError("validation_error", `Name must be 1 to ${KEY_NAME_MAX_LENGTH} characters.`, {
      param: "name",
    });
  }
  return name;
}

interface KeysState {
  /** The key just created, shown once. */
  created?: { name: string; key: string } | null;
  error?: string | null;
  notice?: string | null;
  form?: { name: string; limit: string };
}

function keyRow(s: AccountSession, k: KeyFigures, row: ApiKeyRow, currency: string): SafeHtml {
  const live = k.state === "active";
  const actions =
    live && mayManage(s, row)
      ? html`<a href="/console/keys/${k.key_id}/limit">Change limit</a>
  <form method="get" action="/console/keys/${k.key_id}/revoke" class="inline">
    <button type="submit" class="danger" data-dialog="revoke-${k.key_id}">Revoke</button>
  </form>
  <dialog id="revoke-${k.key_id}" aria-labelledby="revoke-${k.key_id}-title">
    <h2 id="revoke-${k.key_id}-title">Revoke ${k.name}?</h2>
    <p>Requests with this key (<span class="mono">${k.prefix}…</span>) are refused from the next one on. This cannot be undone.</p>
    <form method="post" action="/console/keys/${k.key_id}/revoke">
      ${csrfField(s)}
      <button type="submit" class="danger">Revoke key</button>
      <button type="button" class="secondary" data-dialog-close>Cancel</button>
    </form>
  </dialog>`
      : null;
  return html`<tr data-key="${k.key_id}">
  <th scope="row">${k.name}${row.can_manage === 1n ? html` <span class="hint">(manage)</span>` : null}</th>
  <td class="mono">${k.prefix}…</td>
  <td class="num">${k.monthly_limit_micro === null ? html`<span class="hint">none</span>` : money(k.monthly_limit_micro, currency)}</td>
  <td class="num">${money(k.spent_micro, currency)}</td>
  <td>${when(k.last_used_at)}</td>
  <td>${when(k.created_at)}</td>
  <td>${live ? "active" : "revoked"}</td>
  <td>${actions}</td>
</tr>`;
}

async function keysPage(
  kit: ConsoleKit,
  c: PageContext,
  s: AccountSession,
  state: KeysState = {},
): Promise<SafeHtml> {
  const account = (await kit.ctx.accounts.getAccount(s.accountId))!;
  const rows = new Map((await kit.ctx.accounts.listKeys(s.accountId)).map((k) => [k.id, k]));
  const figures = await keyFigures(kit.ctx, s.accountId);
  const created = state.created
    ? html`<section class="notice warn" aria-labelledby="new-key-title">
  <h2 id="new-key-title">Key "${state.created.name}" created</h2>
  <p>Copy the key now: it is shown only this once. gengate keeps only a hash of it and cannot show it again.</p>
  <label for="new-key">New key</label>
  <div class="copy-row">
    <input id="new-key" type="text" readonly value="${state.created.key}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="new-key" hidden>Copy</button>
  </div>
</section>`
    : null;
  const table = tableBox(
    "Keys",
    html`<table id="keys">
<caption class="visually-hidden">Keys of this account</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col" class="num">Monthly limit</th>
<th scope="col" class="num">Spent this month</th><th scope="col">Last used</th><th scope="col">Created</th>
<th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${figures.map((k) => keyRow(s, k, rows.get(k.key_id)!, account.currency))}</tbody>
</table>`,
  );
  return c.layout({
    title: "Keys",
    active: "keys",
    body: html`<h1>Keys</h1>
${state.notice ? html`<p class="notice ok" role="status">${state.notice}</p>` : null}
${formError(state.error)}
${created}
${table}
<h2>Create a key</h2>
<form class="stack" method="post" action="/console/keys">
  ${csrfField(s)}
  <label for="key-name">Name</label>
  <input id="key-name" name="name" required maxlength="${KEY_NAME_MAX_LENGTH}" value="${state.form?.name ?? ""}" autocomplete="off">
  <label for="key-limit">Monthly limit</label>
  <span class="hint" id="key-limit-hint">In ${account.currency}, e.g. 25.00. Leave empty for no limit.</span>
  <input id="key-limit" name="monthly_limit" inputmode="decimal" maxlength="24" aria-describedby="key-limit-hint" value="${state.form?.limit ?? ""}" autocomplete="off">
  ${s.role === "owner" ? html`<label class="check"><input type="checkbox" name="manage" value="1"> May manage keys through the API</label>` : null}
  <button type="submit">Create key</button>
</form>`,
  });
}

export function keysPages(kit: ConsoleKit) {
  return (
    new Elysia()
      .get(
        "/console/keys",
        kit.page(async (c) => {
          const s = requireAccount(c.session);
          return await keysPage(kit, c, s, { notice: DONE[c.url.searchParams.get("done") ?? ""] ?? null });
        }),
      )
      .post(
        "/console/keys",
        kit.action(async (c) => {
          const s = requireAccount(c.session);
          const form = { name: field(c.form, "name"), limit: field(c.form, "monthly_limit") };
          try {
            const name = keyName(form.name);
            const { key } = await kit.ctx.accounts.createKey(s.accountId, {
              name,
              monthlyLimitMicro: limitInput(form.limit),
              canManage: s.role === "owner" && field(c.form, "manage") === "1",
              createdBy: s.personId,
            });
            // Answered directly (no redirect): the key never goes into a URL; the page is no-store.
            return await keysPage(kit, c, s, { created: { name, key } });
          } catch (err) {
            if (!(err instanceof DomainError) || err.code !== "validation_error") throw err;
            return htmlResponse(await keysPage(kit, c, s, { error: err.message, form }), 400);
          }
        }),
      )
      // ---- change a limit
      .get(
        "/console/keys/:id/limit",
        kit.page(async (c) => {
          const s = requireAccount(c.session);
          return await limitPage(kit, c, s, await manageableKey(kit, s, c.params.id));
        }),
      )
      .post(
        "/console/keys/:id/limit",
        kit.action(async (c) => {
          const s = requireAccount(c.session);
          const key = await manageableKey(kit, s, c.params.id);
          const text = field(c.form, "monthly_limit");
          try {
            await kit.ctx.accounts.updateKey(s.accountId, key.id, { monthlyLimitMicro: limitInput(text) });
          } catch (err) {
            if (!(err instanceof DomainError) || !["validation_error", "conflict"].includes(err.code))
              throw err;
            return htmlResponse(await limitPage(kit, c, s, key, err.message, text), httpStatus(err.code));
          }
          return redirect("/console/keys?done=limit");
        }),
      )
      // ---- revoke (the confirmation page is what `Revoke` leads to without JavaScript)
      .get(
        "/console/keys/:id/revoke",
        kit.page(async (c) => {
          const s = requireAccount(c.session);
          const key = await manageableKey(kit, s, c.params.id);
          return c.layout({
            title: "Revoke key",
            active: "keys",
            body: html`<h1>Revoke ${key.name}?</h1>
${key.revoked_at !== null ? html`<p class="notice">This key is already revoked.</p>` : null}
<p>Requests with this key (<span class="mono">${key.prefix}…</span>) are refused from the next one on. This cannot be undone.</p>
<form method="post" action="/console/keys/${key.id}/revoke">
  ${csrfField(s)}
  <button type="submit" class="danger">Revoke key</button>
  <a class="button secondary" href="/console/keys">Cancel</a>
</form>`,
          });
        }),
      )
      .post(
        "/console/keys/:id/revoke",
        kit.action(async (c) => {
          const s = requireAccount(c.session);
          const key = await manageableKey(kit, s, c.params.id);
          try {
            await kit.ctx.accounts.revokeKey(s.accountId, key.id);
          } catch (err) {
            // The account's last manage key: the service's own message, on the keys page.
            if (!(err instanceof DomainError) || err.code !== "conflict") throw err;
            return htmlResponse(await keysPage(kit, c, s, { error: err.message }), 409);
          }
          return redirect("/console/keys?done=revoked");
        }),
      )
  );
}

async function limitPage(
  kit: ConsoleKit,
  c: PageContext,
  s: AccountSession,
  key: ApiKeyRow,
  error: string | null = null,
  value?: string,
): Promise<SafeHtml> {
  const currency = (await kit.ctx.accounts.getAccount(s.accountId))!.currency;
  const current = key.monthly_limit_micro === null ? "" : formatMicro(key.monthly_limit_micro);
  return c.layout({
    title: "Change limit",
    active: "keys",
    body: html`<h1>Monthly limit of ${key.name}</h1>
${formError(error)}
<p>Now: ${key.monthly_limit_micro === null ? "no limit" : money(key.monthly_limit_micro, currency)}.
The limit counts this calendar month's charges (UTC) and what the key's running jobs hold.</p>
<form class="stack" method="post" action="/console/keys/${key.id}/limit">
  ${csrfField(s)}
  <label for="limit">Monthly limit</label>
  <span class="hint" id="limit-hint">In ${currency}, e.g. 25.00. Leave empty for no limit.</span>
  <input id="limit" name="monthly_limit" inputmode="decimal" maxlength="24" aria-describedby="limit-hint" value="${value ?? current}" autocomplete="off">
  <button type="submit">Save limit</button>
  <a href="/console/keys">Back to keys</a>
</form>`,
  });
}
