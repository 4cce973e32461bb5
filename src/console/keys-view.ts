/**
 * The keys pages' HTML (keys-pages.ts, keys-edit-pages.ts): the list with each key's actions, the
 * key just created (shown once), the create form, a key's edit form and the revoke confirmation.
 */

import { mayManageKey } from "../accounts/key-access.ts";
import { KEY_NAME_MAX_LENGTH } from "../accounts/schemas.ts";
import type { ApiKeyRow } from "../accounts/store.ts";
import type { KeyFigures } from "../ledger/figures.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro } from "../lib/money.ts";
import { nowSeconds, rfc3339 } from "../lib/time.ts";
import { expiresDay, type KeyForm, listText } from "./keys-shared.ts";
import { type AccountSession, formError } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { money, tableBox, when } from "./money-view.ts";

export interface KeysState {
  /** The key just created, shown once. */
  created?: { name: string; key: string } | null;
  error?: string | null;
  notice?: string | null;
  form?: KeyForm;
}

const NO_FORM: KeyForm = {
  name: "",
  limit: "",
  writes: "",
  inFlight: "",
  expires: "",
  expiresWas: "",
  models: "",
  addresses: "",
};

/** The controls both forms have: Expires, Allowed models, Allowed addresses (ids prefixed by `p`). */
function controlFields(p: string, f: KeyForm): SafeHtml {
  return html`<label for="${p}-expires">Expires</label>
  <span class="hint" id="${p}-expires-hint">The key works through this day (UTC). Leave empty for never.</span>
  <input id="${p}-expires" name="expires" type="date" aria-describedby="${p}-expires-hint" value="${f.expires}">
  <label for="${p}-models">Allowed models</label>
  <span class="hint" id="${p}-models-hint">Model ids, or prefixes ending in * (fal-ai/flux/*), one a line. Leave empty for every model.</span>
  <textarea id="${p}-models" name="allowed_models" rows="3" class="mono" spellcheck="false" autocomplete="off" aria-describedby="${p}-models-hint">${f.models}</textarea>
  <label for="${p}-addresses">Allowed addresses</label>
  <span class="hint" id="${p}-addresses-hint">Client addresses or blocks (203.0.113.0/24, 2001:db8::/32), one a line. Leave empty for anywhere.</span>
  <textarea id="${p}-addresses" name="allowed_addresses" rows="3" class="mono" spellcheck="false" autocomplete="off" aria-describedby="${p}-addresses-hint">${f.addresses}</textarea>`;
}

/** A key's state as the table says it. */
export function stateOf(row: ApiKeyRow): string {
  if (row.revoked_at !== null) return "revoked";
  if (row.disabled_at !== null) return "disabled";
  if (row.expires_at !== null && Number(row.expires_at) <= nowSeconds()) return "expired";
  return "active";
}

/**
 * `Revoke` and its confirmation `Revoke key`: a GET form to `path` (the confirmation page without
 * JavaScript) whose button opens the dialog that POSTs to `path`. The Keys page's rows and the
 * operator's account page (`label`: the button's accessible name there, `Revoke <key name>`).
 */
export function revokeControl(
  s: Pick<AccountSession, "csrfToken">,
  k: Pick<KeyFigures, "key_id" | "name" | "prefix">,
  path: string,
  label?: string,
): SafeHtml {
  return html`<form method="get" action="${path}" class="inline">
    <button type="submit" class="danger" data-dialog="revoke-${k.key_id}"${label ? html` aria-label="${label}"` : null}>Revoke</button>
  </form>
  <dialog id="revoke-${k.key_id}" aria-labelledby="revoke-${k.key_id}-title">
    <h2 id="revoke-${k.key_id}-title">Revoke ${k.name}?</h2>
    <p>Requests with this key (<span class="mono">${k.prefix}…</span>) are refused from the next one on. This cannot be undone.</p>
    <form method="post" action="${path}">
      ${csrfField(s)}
      <button type="submit" class="danger">Revoke key</button>
      <button type="button" class="secondary" data-dialog-close>Cancel</button>
    </form>
  </dialog>`;
}

function keyRow(s: AccountSession, k: KeyFigures, row: ApiKeyRow, currency: string): SafeHtml {
  const live = k.state === "active";
  const actions =
    live && mayManageKey(s, row)
      ? html`<a href="/console/keys/${k.key_id}/edit" aria-label="Edit ${k.name}">Edit</a>
  <form method="post" action="/console/keys/${k.key_id}/${row.disabled_at === null ? "disable" : "enable"}" class="inline">
    ${csrfField(s)}
    <button type="submit" class="secondary">${row.disabled_at === null ? "Disable" : "Enable"}</button>
  </form>
  ${revokeControl(s, k, `/console/keys/${k.key_id}/revoke`)}`
      : null;
  return html`<tr data-key="${k.key_id}">
  <th scope="row">${k.name}${row.can_manage === 1n ? html` <span class="hint">(manage)</span>` : null}</th>
  <td class="mono">${k.prefix}…</td>
  <td class="num">${k.monthly_limit_micro === null ? html`<span class="hint">none</span>` : money(k.monthly_limit_micro, currency)}</td>
  <td class="num">${money(k.spent_micro, currency)}</td>
  <td>${when(k.last_used_at)}</td>
  <td>${when(k.created_at)}</td>
  <td>${stateOf(row)}${row.expires_at !== null && live ? html`<br><span class="hint">until ${when(rfc3339(row.expires_at))}</span>` : null}</td>
  <td>${actions}</td>
</tr>`;
}

/** The keys page: the key just created (shown once), the table, the create form. */
export function keysBody(
  s: AccountSession,
  currency: string,
  figures: KeyFigures[],
  rows: Map<string, ApiKeyRow>,
  state: KeysState,
): SafeHtml {
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
<tbody>${figures.map((k) => keyRow(s, k, rows.get(k.key_id)!, currency))}</tbody>
</table>`,
  );
  return html`<h1>Keys</h1>
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
  <span class="hint" id="key-limit-hint">In ${currency}, e.g. 25.00. Leave empty for no limit.</span>
  <input id="key-limit" name="monthly_limit" inputmode="decimal" maxlength="24" aria-describedby="key-limit-hint" value="${state.form?.limit ?? ""}" autocomplete="off">
  ${controlFields("key", state.form ?? NO_FORM)}
  ${s.role === "owner" ? html`<label class="check"><input type="checkbox" name="manage" value="1"> May manage keys through the API</label>` : null}
  <button type="submit">Create key</button>
</form>`;
}

/** A key's edit form; `typed` is what was typed when it was refused. */
export function editBody(
  s: AccountSession,
  key: ApiKeyRow,
  currency: string,
  error: string | null,
  typed?: KeyForm,
): SafeHtml {
  const f = typed ?? {
    name: key.name,
    limit: key.monthly_limit_micro === null ? "" : formatMicro(key.monthly_limit_micro),
    writes: key.writes_per_minute === null ? "" : String(key.writes_per_minute),
    inFlight: key.max_in_flight === null ? "" : String(key.max_in_flight),
    expires: expiresDay(key),
    expiresWas: expiresDay(key),
    models: listText(key.allowed_models),
    addresses: listText(key.allowed_cidrs),
  };
  return html`<h1>Edit ${key.name}</h1>
${formError(error)}
<p>Changes apply from the key's next API request on. The monthly limit counts this calendar month's
charges (UTC) and what the key's running jobs hold.</p>
<form class="stack" method="post" action="/console/keys/${key.id}/edit">
  ${csrfField(s)}
  <input type="hidden" name="expires_was" value="${f.expiresWas}">
  <label for="edit-name">Name</label>
  <input id="edit-name" name="name" required maxlength="${KEY_NAME_MAX_LENGTH}" value="${f.name}" autocomplete="off">
  <label for="edit-limit">Monthly limit</label>
  <span class="hint" id="edit-limit-hint">In ${currency}, e.g. 25.00. Leave empty for no limit.</span>
  <input id="edit-limit" name="monthly_limit" inputmode="decimal" maxlength="24" aria-describedby="edit-limit-hint" value="${f.limit}" autocomplete="off">
  <label for="edit-writes">Writes per minute</label>
  <span class="hint" id="edit-writes-hint">Leave empty for the server's default.</span>
  <input id="edit-writes" name="writes_per_minute" inputmode="numeric" maxlength="9" aria-describedby="edit-writes-hint" value="${f.writes}" autocomplete="off">
  <label for="edit-in-flight">Requests in flight</label>
  <span class="hint" id="edit-in-flight-hint">Queued and running jobs at once. Leave empty for the server's default.</span>
  <input id="edit-in-flight" name="max_in_flight" inputmode="numeric" maxlength="9" aria-describedby="edit-in-flight-hint" value="${f.inFlight}" autocomplete="off">
  ${controlFields("edit", f)}
  <button type="submit">Save key</button>
  <a href="/console/keys">Back to keys</a>
</form>`;
}

/** The revoke confirmation (what `Revoke` leads to without JavaScript). */
export function revokeBody(s: AccountSession, key: ApiKeyRow): SafeHtml {
  return html`<h1>Revoke ${key.name}?</h1>
${key.revoked_at !== null ? html`<p class="notice">This key is already revoked.</p>` : null}
<p>Requests with this key (<span class="mono">${key.prefix}…</span>) are refused from the next one on. This cannot be undone.</p>
<form method="post" action="/console/keys/${key.id}/revoke">
  ${csrfField(s)}
  <button type="submit" class="danger">Revoke key</button>
  <a class="button secondary" href="/console/keys">Cancel</a>
</form>`;
}
