/**
 * The operator pages under /console/admin: accounts (search, credit and adjust with a required
 * reason), people and invites (create an invite or a password-reset link, shown once; revoke an
 * invite), providers' health (their circuits) and FX rates. Every route calls requireOperator
 * first: anyone else gets 403, on pages and actions alike. Money and links go through the same
 * services as the admin API and the CLI (src/admin/operations.ts, the people services of src/people/).
 */
import { Elysia } from "elysia";
import type { Account } from "../accounts/accounts.ts";
import {
  creditAccount,
  adjustAccount as doAdjust,
  requireAccount as operatorAccount,
  requireReason,
  setFxRate,
} from "../admin/operations.ts";
import { FX_CURRENCIES, isFxCurrency } from "../fx/rates.ts";
import { decimalFromInput } from "../http/inputs.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro } from "../lib/money.ts";
import type { Role } from "../people/types.ts";
import { circuitFor } from "../providers/registry.ts";
import { formatMoney, formatTime } from "./format.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  formError,
  htmlResponse,
  type PageContext,
  redirect,
  requireOperator,
} from "./kit.ts";
import { csrfField } from "./layout.ts";
import { isoText } from "./requests-view.ts";

const ACCOUNT_ID = /^acct_[0-9A-Za-z]{8,64}$/;
const INVITE_ID = /^inv_[0-9A-Za-z]{8,64}$/;
const LIST_SIZE = 50;

const SECTIONS = [
  { href: "/console/admin", label: "Accounts" },
  { href: "/console/admin/people", label: "People and invites" },
  { href: "/console/admin/providers", label: "Providers" },
  { href: "/console/admin/fx", label: "Exchange rates" },
  { href: "/console/admin/codes", label: "Redeem codes" },
  { href: "/console/admin/mail", label: "Mail" },
  { href: "/console/admin/orders", label: "Orders" },
] as const;

export async function adminPage(
  c: PageContext,
  title: string,
  current: string,
  body: SafeHtml,
  status = 200,
): Promise<Response> {
  const nav = html`<nav class="subnav" aria-label="Operator">
<ul>${SECTIONS.map((s) => html`<li><a href="${s.href}"${s.href === current ? html` aria-current="page"` : null}>${s.label}</a></li>`)}</ul>
</nav>`;
  return htmlResponse(await c.layout({ title, active: "admin", body: html`${nav}${body}` }), status);
}

/** A form error the operator should see on the page it came from (validation, conflict, not found). */
export function shown(err: unknown): { message: string; status: number } | null {
  if (!(err instanceof DomainError)) return null;
  if (err.code === "validation_error") return { message: err.message, status: 400 };
  if (err.code === "conflict") return { message: err.message, status: 409 };
  if (err.code === "not_found") return { message: err.message, status: 404 };
  return null;
}

export function notice(text: string | null): SafeHtml | null {
  return text ? html`<p class="notice ok" role="status">${text}</p>` : null;
}

// ---- accounts -----------------------------------------------------------------------------------

function accountRows(rows: Account[]): SafeHtml {
  if (rows.length === 0) return html`<p>No accounts match.</p>`;
  return html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col" class="num">Balance</th><th scope="col" class="num">Held</th><th scope="col" class="num">Available</th></tr></thead>
<tbody>${rows.map(
    (a) => html`<tr>
  <td><a href="/console/admin/accounts/${a.id}">${a.name}</a></td>
  <td class="mono">${a.id}</td>
  <td class="num">${formatMoney(a.balance_micro, a.currency)}</td>
  <td class="num">${formatMoney(a.held_micro, a.currency)}</td>
  <td class="num">${formatMoney(a.balance_micro - a.held_micro, a.currency)}</td>
</tr>`,
  )}</tbody></table></div>`;
}

async function accountsPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const q = (c.url.searchParams.get("q") ?? "").trim().slice(0, 200);
  const after = c.url.searchParams.get("after") ?? "";
  let rows: Account[];
  let next: string | null = null;
  if (q) {
    rows = await kit.ctx.accounts.searchAccounts(q, LIST_SIZE);
  } else {
    const cursor = ACCOUNT_ID.test(after) ? after : null;
    const got = await kit.ctx.accounts.listAccounts(LIST_SIZE + 1, cursor);
    rows = got.slice(0, LIST_SIZE);
    if (got.length > LIST_SIZE) next = rows[rows.length - 1]!.id;
  }
  const body = html`<h1>Accounts</h1>
<form class="filters" method="get" action="/console/admin" role="search">
  <label>Search <input type="search" name="q" value="${q}" maxlength="200" placeholder="Name or account id"></label>
  <button type="submit">Search</button>
  ${q ? html`<a href="/console/admin">All accounts</a>` : null}
</form>
${accountRows(rows)}
${next ? html`<p><a class="button secondary" href="/console/admin?after=${next}">Next</a></p>` : null}`;
  return adminPage(c, "Accounts", "/console/admin", body);
}

function accountIdParam(c: PageContext): string {
  const id = c.params.id ?? "";
  if (!ACCOUNT_ID.test(id)) throw new DomainError("not_found", `No account ${id}.`);
  return id;
}

interface MoneyFormState {
  credit?: { amount: string; reason: string; error: string | null };
  adjust?: { amount: string; reason: string; error: string | null };
  done?: string | null;
}

async function accountDetail(
  c: PageContext,
  kit: ConsoleKit,
  state: MoneyFormState = {},
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const a = await operatorAccount(kit.ctx, accountIdParam(c));
  const cur = a.currency;
  const keys = await kit.ctx.accounts.listKeys(a.id);
  const members = await kit.people.members.listMembers(a.id);
  const entries = (await kit.ctx.wallet.entries(a.id, 10, null)).data;
  const credit = state.credit ?? { amount: "", reason: "", error: null };
  const adjust = state.adjust ?? { amount: "", reason: "", error: null };
  const body = html`<p><a href="/console/admin">← All accounts</a></p>
<h1 class="wrap-anywhere">${a.name}</h1>
<p class="mono">${a.id}</p>
${notice(state.done ?? null)}
<div class="cards">
  <div class="card"><h2>Balance</h2><p class="figure">${formatMoney(a.balance_micro, cur)}</p></div>
  <div class="card"><h2>Held</h2><p class="figure">${formatMoney(a.held_micro, cur)}</p></div>
  <div class="card"><h2>Available</h2><p class="figure">${formatMoney(a.balance_micro - a.held_micro, cur)}</p></div>
</div>
<p>Currency ${cur}; ${keys.filter((k) => k.revoked_at === null).length} active keys; created ${formatTime(a.created_at)}.</p>

<h2 id="credit-heading">Credit</h2>
<form class="stack" method="post" action="/console/admin/accounts/${a.id}/credit" aria-labelledby="credit-heading">
  ${csrfField(c.session)}
  ${formError(credit.error)}
  <label>Amount (${cur}) <span class="hint">A decimal above 0 with at most 6 places, e.g. 12.50.</span>
    <input name="amount" inputmode="decimal" required maxlength="40" value="${credit.amount}" autocomplete="off"></label>
  <label>Reason <input name="reason" required maxlength="500" value="${credit.reason}" autocomplete="off"></label>
  <button type="submit">Credit</button>
</form>

<h2 id="adjust-heading">Adjust</h2>
<form class="stack" method="post" action="/console/admin/accounts/${a.id}/adjust" aria-labelledby="adjust-heading">
  ${csrfField(c.session)}
  ${formError(adjust.error)}
  <label>Amount (${cur}) <span class="hint">Signed: -5 takes 5 ${cur} away. The balance may not go below what is held by open jobs.</span>
    <input name="amount" inputmode="decimal" required maxlength="40" value="${adjust.amount}" autocomplete="off"></label>
  <label>Reason <input name="reason" required maxlength="500" value="${adjust.reason}" autocomplete="off"></label>
  <button type="submit">Adjust</button>
</form>

<h2>Members</h2>
${
  members.length
    ? html`<ul class="wrap-anywhere">${members.map((m) => html`<li>${m.email} (${m.role})</li>`)}</ul>`
    : html`<p>No console members. Invite one on <a href="/console/admin/people">People and invites</a>.</p>`
}

<h2>Latest wallet entries</h2>
${
  entries.length
    ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Source</th><th scope="col" class="num">Amount</th><th scope="col">Reason</th></tr></thead>
<tbody>${entries.map(
        (e) => html`<tr><td>${isoText(e.created_at)}</td><td>${e.kind}</td><td>${e.label}</td>
<td class="num">${formatMoney(BigInt(e.balance_delta_micro), cur)}</td><td>${e.reason ?? ""}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No entries yet.</p>`
}`;
  return adminPage(c, a.name, "/console/admin", body, status);
}

function moneyAction(kit: ConsoleKit, kind: "credit" | "adjust") {
  return kit.action(async (c: ActionContext) => {
    requireOperator(c.session);
    const id = accountIdParam(c);
    await operatorAccount(kit.ctx, id);
    const amount = field(c.form, "amount").trim().slice(0, 100);
    const reason = field(c.form, "reason");
    try {
      const text = requireReason(reason, kind === "credit" ? "A credit" : "An adjustment");
      const micro = decimalFromInput(amount, "amount", kind === "adjust");
      const after =
        kind === "credit"
          ? await creditAccount(kit.ctx, id, micro, text)
          : await doAdjust(kit.ctx, id, micro, text);
      const done = `${kind === "credit" ? "Credited" : "Adjusted by"} ${formatMicro(micro)} ${after.currency}.`;
      return redirect(`/console/admin/accounts/${id}?done=${encodeURIComponent(done)}`);
    } catch (err) {
      const s = shown(err);
      if (!s) throw err;
      return await accountDetail(
        c,
        kit,
        { [kind]: { amount, reason: reason.slice(0, 500), error: s.message } },
        s.status,
      );
    }
  });
}

// ---- people and invites -------------------------------------------------------------------------

interface PeopleState {
  /** A link just made (invite or reset), shown once. */
  link?: { label: string; url: string; expires: string } | null;
  inviteError?: string | null;
  resetError?: string | null;
  invite?: { email: string; account: string; role: string; operator: boolean };
  done?: string | null;
}

async function peoplePage(
  c: PageContext,
  kit: ConsoleKit,
  state: PeopleState = {},
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const after = c.url.searchParams.get("after") ?? "";
  const got = await kit.people.members.listPeople({
    limit: LIST_SIZE + 1,
    after: /^person_[0-9A-Za-z]{8,64}$/.test(after) ? after : null,
  });
  const people = got.slice(0, LIST_SIZE);
  const next = got.length > LIST_SIZE ? people[people.length - 1]!.id : null;
  const invites = await kit.people.invites.listInvites({ limit: LIST_SIZE });
  const names = new Map<string, string>();
  const nameOf = async (id: string | null) => {
    if (id === null) return "a new account";
    if (!names.has(id)) names.set(id, (await kit.ctx.accounts.getAccount(id))?.name ?? id);
    return names.get(id)!;
  };
  const inv = state.invite ?? { email: "", account: "", role: "member", operator: false };
  const link = state.link
    ? html`<div class="notice warn" role="status">
  <p>${state.link.label} Copy it now: it is shown only once. ${state.link.expires}</p>
  <div class="copy-row">
    <label class="visually-hidden" for="new-link">One-time link</label>
    <input id="new-link" type="text" readonly value="${state.link.url}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="new-link" hidden>Copy</button>
  </div>
</div>`
    : null;
  const body = html`<h1>People and invites</h1>
${notice(state.done ?? null)}
${link}
<h2 id="invite-heading">Invite a person</h2>
<form class="stack" method="post" action="/console/admin/invites" aria-labelledby="invite-heading">
  ${csrfField(c.session)}
  ${formError(state.inviteError)}
  <label>Email <input type="email" name="email" required maxlength="254" value="${inv.email}" autocomplete="off"></label>
  <label>Account <span class="hint">An account id (acct_…) to join; empty: accepting the invite creates a new account with the person as owner.</span>
    <input name="account" maxlength="80" value="${inv.account}" autocomplete="off"></label>
  <label>Role <select name="role">
    <option value="member"${inv.role === "member" ? html` selected` : null}>member</option>
    <option value="owner"${inv.role === "owner" ? html` selected` : null}>owner</option>
  </select></label>
  <label class="check"><input type="checkbox" name="operator" value="1"${inv.operator ? html` checked` : null}> Operator (sees these pages)</label>
  <button type="submit">Create invite</button>
</form>

<h2>People</h2>
${formError(state.resetError)}
${
  people.length
    ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Email</th><th scope="col">Accounts</th><th scope="col">Operator</th><th scope="col">Two-factor</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
<tbody>${await Promise.all(
        people.map(
          async (p) => html`<tr>
  <td>${p.email}${p.hasPassword ? null : html` <span class="hint">(invited)</span>`}${p.disabledAt !== null ? html` <span class="hint">(disabled)</span>` : null}</td>
  <td>${p.memberships.length ? await Promise.all(p.memberships.map(async (m, i) => html`${i ? ", " : null}<a href="/console/admin/accounts/${m.accountId}">${await nameOf(m.accountId)}</a> (${m.role})`)) : "—"}</td>
  <td>${p.operator ? "yes" : "no"}</td>
  <td>${p.twoFactor ? "on" : "off"}</td>
  <td>${formatTime(p.createdAt)}</td>
  <td><form method="post" action="/console/admin/reset">
    ${csrfField(c.session)}
    <input type="hidden" name="email" value="${p.email}">
    <button type="submit" class="secondary" aria-label="Password reset link for ${p.email}">Reset link</button>
  </form></td>
</tr>`,
        ),
      )}</tbody></table></div>`
    : html`<p>No people yet.</p>`
}
${next ? html`<p><a class="button secondary" href="/console/admin/people?after=${next}">Next</a></p>` : null}

<h2>Invites</h2>
${
  invites.length
    ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Email</th><th scope="col">Into</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
<tbody>${await Promise.all(
        invites.map(
          async (i) => html`<tr>
  <td>${i.email ?? "anyone with the link"}</td>
  <td>${await nameOf(i.accountId)}</td>
  <td>${i.role}${i.operator ? ", operator" : null}</td>
  <td>${i.state}</td>
  <td>${formatTime(i.expiresAt)}</td>
  <td>${
    i.state === "pending"
      ? html`<form method="post" action="/console/admin/invites/${i.id}/revoke">
    ${csrfField(c.session)}
    <button type="submit" class="danger" aria-label="Revoke the invite for ${i.email ?? i.id}">Revoke</button>
  </form>`
      : null
  }</td>
</tr>`,
        ),
      )}</tbody></table></div>`
    : html`<p>No invites.</p>`
}`;
  return adminPage(c, "People and invites", "/console/admin/people", body, status);
}

const untilText = (epochSeconds: number) => `It works until ${formatTime(epochSeconds)}.`;

// ---- providers and FX ---------------------------------------------------------------------------

async function providersPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const rows = Object.entries(kit.ctx.live.providers).map(([name, p]) => ({
    name,
    type: p.type,
    models: kit.ctx.catalog.models.filter((m) => m.provider === name).length,
    ...circuitFor(kit.ctx.circuits, name).view(),
  }));
  const body = html`<h1>Providers</h1>
<p class="hint">Each provider's circuit: after repeated upstream failures it opens, and new requests for its models
are refused (503, nothing reserved) until a trial request succeeds. The same figures as /readyz and GET /admin/v1/providers.</p>
${
  rows.length
    ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Provider</th><th scope="col">Type</th><th scope="col" class="num">Models</th><th scope="col">Circuit</th><th scope="col" class="num">Consecutive failures</th></tr></thead>
<tbody>${rows.map(
        (r) => html`<tr>
  <td class="mono">${r.name}</td><td>${r.type}</td><td class="num">${r.models}</td>
  <td>${r.healthy ? "healthy (closed)" : r.state === "open" ? "unhealthy (open)" : "trial (half open)"}</td>
  <td class="num">${r.consecutive_failures}</td>
</tr>`,
      )}</tbody></table></div>`
    : html`<p>No upstream providers are configured (only the sandbox models run).</p>`
}`;
  return await adminPage(c, "Providers", "/console/admin/providers", body);
}

async function fxPage(
  c: PageContext,
  kit: ConsoleKit,
  state: { rate?: string; error?: string | null } = {},
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const rates = new Map((await kit.ctx.fx.list()).map((r) => [r.currency, r]));
  const done = c.url.searchParams.get("done") === "1" ? "The rate is set; new reservations use it." : null;
  const body = html`<h1>Exchange rates</h1>
${notice(done)}
<p class="hint">Prices are quoted in USD; RUB accounts are charged at the rate fixed when each request was reserved.
New reservations use the current rate; open holds keep theirs.</p>
<div class="table-wrap"><table>
<thead><tr><th scope="col">Currency</th><th scope="col" class="num">Per 1 USD</th><th scope="col">Source</th><th scope="col">Set at</th></tr></thead>
<tbody>${FX_CURRENCIES.map((cur) => {
    const r = rates.get(cur);
    return html`<tr><td>USD→${cur}</td><td class="num">${r ? formatMicro(r.rate_micro) : "not set"}</td>
<td>${r?.source ?? "—"}</td><td>${r ? formatTime(r.updated_at) : "—"}</td></tr>`;
  })}</tbody></table></div>
<h2 id="fx-heading">Set a rate</h2>
<form class="stack" method="post" action="/console/admin/fx" aria-labelledby="fx-heading">
  ${csrfField(c.session)}
  ${formError(state.error)}
  <label>Currency <select name="currency">${FX_CURRENCIES.map((cur) => html`<option value="${cur}">${cur}</option>`)}</select></label>
  <label>Rate <span class="hint">Units of the currency per 1 USD, e.g. 92.5 (at most 6 decimals).</span>
    <input name="rate" inputmode="decimal" required maxlength="40" value="${state.rate ?? ""}" autocomplete="off"></label>
  <button type="submit">Set rate</button>
</form>`;
  return adminPage(c, "Exchange rates", "/console/admin/fx", body, status);
}

// ---- routes -------------------------------------------------------------------------------------

export function adminPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/admin",
      kit.page(async (c) => await accountsPage(c, kit)),
    )
    .get(
      "/console/admin/accounts/:id",
      kit.page(async (c) => {
        const done = (c.url.searchParams.get("done") ?? "").slice(0, 200);
        // Only our own redirect's wording is shown back.
        return await accountDetail(c, kit, {
          done: /^(Credited|Adjusted by) -?[0-9.]+ [A-Z]{3}\.$/.test(done) ? done : null,
        });
      }),
    )
    .post("/console/admin/accounts/:id/credit", moneyAction(kit, "credit"))
    .post("/console/admin/accounts/:id/adjust", moneyAction(kit, "adjust"))
    .get(
      "/console/admin/people",
      kit.page(async (c) => {
        const done = c.url.searchParams.get("done") === "revoked" ? "The invite is revoked." : null;
        return await peoplePage(c, kit, { done });
      }),
    )
    .post(
      "/console/admin/invites",
      kit.action(async (c) => {
        requireOperator(c.session);
        const invite = {
          email: field(c.form, "email").trim().slice(0, 254),
          account: field(c.form, "account").trim().slice(0, 80),
          role: field(c.form, "role"),
          operator: field(c.form, "operator") !== "",
        };
        try {
          if (invite.account && !ACCOUNT_ID.test(invite.account))
            throw new DomainError("validation_error", "Account must be an account id (acct_…) or empty.");
          if (invite.role !== "owner" && invite.role !== "member")
            throw new DomainError("validation_error", 'The role must be "owner" or "member".');
          if (!invite.email) throw new DomainError("validation_error", "An invite needs an email.");
          const made = await kit.people.invites.createInvite({
            email: invite.email,
            accountId: invite.account || null,
            role: invite.role as Role,
            operator: invite.operator,
            createdBy: c.session.personId,
          });
          return await peoplePage(c, kit, {
            link: {
              label: `The invite link for ${invite.email}.${made.mailed ? " It is also being emailed to that address." : ""}`,
              url: made.url,
              expires: untilText(made.expiresAt),
            },
          });
        } catch (err) {
          const s = shown(err);
          if (!s) throw err;
          return peoplePage(c, kit, { invite, inviteError: s.message }, s.status);
        }
      }),
    )
    .post(
      "/console/admin/invites/:id/revoke",
      kit.action(async (c) => {
        requireOperator(c.session);
        const id = c.params.id ?? "";
        if (!INVITE_ID.test(id)) throw new DomainError("not_found", `No unused invite ${id}.`);
        await kit.people.invites.revokeInvite(id);
        return redirect("/console/admin/people?done=revoked");
      }),
    )
    .post(
      "/console/admin/reset",
      kit.action(async (c) => {
        requireOperator(c.session);
        const email = field(c.form, "email").trim().slice(0, 320);
        const reset = email ? await kit.people.resets.requestPasswordReset(email) : null;
        if (!reset) return peoplePage(c, kit, { resetError: `No person with the email ${email}.` }, 404);
        return peoplePage(c, kit, {
          link: {
            label: `The password reset link for ${email}.${reset.mailed ? " It is also being emailed to the person." : ""} Setting a password through it signs them out everywhere.`,
            url: reset.url,
            expires: "It works for 1 hour.",
          },
        });
      }),
    )
    .get(
      "/console/admin/providers",
      kit.page(async (c) => await providersPage(c, kit)),
    )
    .get(
      "/console/admin/fx",
      kit.page(async (c) => await fxPage(c, kit)),
    )
    .post(
      "/console/admin/fx",
      kit.action(async (c) => {
        requireOperator(c.session);
        const currency = field(c.form, "currency") || "RUB";
        const rate = field(c.form, "rate").trim().slice(0, 100);
        try {
          if (!isFxCurrency(currency))
            throw new DomainError("validation_error", `The currency must be ${FX_CURRENCIES.join(" or ")}.`);
          await setFxRate(kit.ctx, currency, rate, "console");
          return redirect("/console/admin/fx?done=1");
        } catch (err) {
          const s = shown(err);
          if (!s) throw err;
          return await fxPage(c, kit, { rate, error: s.message }, s.status);
        }
      }),
    );
}
