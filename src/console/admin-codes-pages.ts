/**
 * The operator's redeem codes (`/console/admin/codes`): make a batch (post/redirect/get: the codes
 * wait in the session's one-time flash, cleared when the page after the redirect reads it and
 * ignored after 10 minutes, and are shown once there: a read-only box with a copy button and a
 * download as text built in the page as a data: link), the batches with their counts
 * (redeemed, unused, expired, revoked), and revoking a batch's unused codes after a confirmation
 * (a <dialog>; without JavaScript a confirmation page). The same CodeService as the CLI and the
 * admin API. Every route starts with requireOperator (403 for anyone else).
 */
import { Elysia } from "elysia";
import { type BatchView, NOTE_MAX_LENGTH } from "../codes/service.ts";
import { DomainError } from "../lib/errors.ts";
import { html } from "../lib/html.ts";
import { type CodesState, codesBody, PATH, revokeForm } from "./admin-codes-view.ts";
import { adminPage, shown } from "./admin-view.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  type PageContext,
  redirect,
  requireOperator,
} from "./kit.ts";

const BATCH_ID = /^rbatch_[0-9A-Za-z]{8,64}$/;

async function codesPage(
  c: PageContext,
  kit: ConsoleKit,
  state: CodesState = {},
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const batches = await kit.ctx.codes.listBatches(100);
  const body = codesBody(c.session, batches, state);
  return adminPage(c, "Redeem codes", PATH, body, status);
}

function batchParam(c: PageContext): string {
  const id = c.params.id ?? "";
  if (!BATCH_ID.test(id)) throw new DomainError("not_found", `No code batch ${id}.`);
  return id;
}

/** The flash kind of a batch just made (src/people/sessions.ts setFlash): its codes, shown once. */
const NEW_CODES = "new-codes";

async function showCodes(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const revoked = c.url.searchParams.get("revoked") ?? "";
  const made = await kit.people.sessions.takeFlash<{ batch: BatchView; codes: string[] }>(
    c.session.sessionId,
    NEW_CODES,
  );
  // A reload after the codes were shown finds no flash: it says so instead of making a second batch.
  const done = /^[0-9]{1,4}$/.test(revoked)
    ? `${revoked} unused code(s) revoked.`
    : !made && c.url.searchParams.get("done") === "made"
      ? "The batch's codes were shown once, when it was made; they are not shown again."
      : null;
  return await codesPage(c, kit, { made, done });
}

async function createBatch(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const form = {
    amount: field(c.form, "amount").trim().slice(0, 40),
    currency: field(c.form, "currency").slice(0, 8),
    count: field(c.form, "count").trim().slice(0, 12),
    expires: field(c.form, "expires").trim().slice(0, 40),
    note: field(c.form, "note").slice(0, NOTE_MAX_LENGTH + 1),
  };
  try {
    const made = await kit.ctx.codes.createBatchFrom({ ...form, createdBy: c.session.personId });
    // Post/redirect/get: the codes wait in the session's one-time flash for the page the redirect
    // leads to, so reloading that page never makes a second batch (and shows the codes only once).
    await kit.people.sessions.setFlash(c.session.sessionId, NEW_CODES, made);
    return redirect(`${PATH}?done=made`);
  } catch (err) {
    const s = shown(err);
    if (!s) throw err;
    return codesPage(c, kit, { form, error: s.message }, s.status);
  }
}

async function confirmRevoke(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const b = await kit.ctx.codes.getBatch(batchParam(c));
  return adminPage(
    c,
    "Revoke codes",
    PATH,
    html`<p><a href="${PATH}">← Redeem codes</a></p>${revokeForm(b, c.session)}`,
  );
}

async function revokeBatch(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const { revoked } = await kit.ctx.codes.revokeBatch(batchParam(c));
  return redirect(`${PATH}?revoked=${revoked}`);
}

export function adminCodesPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      PATH,
      kit.page((c) => showCodes(c, kit)),
    )
    .post(
      PATH,
      kit.action((c) => createBatch(c, kit)),
    )
    .get(
      `${PATH}/:id/revoke`,
      kit.page((c) => confirmRevoke(c, kit)),
    )
    .post(
      `${PATH}/:id/revoke`,
      kit.action((c) => revokeBatch(c, kit)),
    );
}
