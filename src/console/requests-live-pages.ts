/**
 * The requests pages' live parts and their one action: the rows of queued and running requests
 * re-read every 2 s by htmx (the list's and one request's), and `Cancel request` on a queued one.
 * Cancel is the API's own (tryCancel, src/queue/ownership.ts: IN_QUEUE -> CANCELLED with the hold
 * released in the same transaction), for any member of the account (owners and members alike may
 * use its API, whose cancel takes any of its requests); another account's request is 404.
 * Post/redirect/get: both outcomes return to the page the button was on, with a notice.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { tryCancel } from "../queue/ownership.ts";
import { requestRows } from "../queue/requests.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
} from "./kit.ts";
import { csrfField } from "./layout.ts";
import { cancelForm, liveRows } from "./requests-list-view.ts";
import { backOf, withNotice } from "./requests-shared.ts";
import { liveFacts } from "./requests-view.ts";

/** GET /console/requests/live?ids=...&back=...: the rows named, the account's only. */
async function liveList(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const ids = (c.url.searchParams.get("ids") ?? "").split(",").filter((id) => id !== "");
  const rows = await requestRows(kit.ctx, s.accountId, ids);
  const back = backOf(c.url.searchParams.get("back") ?? "");
  return htmlResponse(liveRows(rows, { csrf: csrfField(s), back }));
}

/** GET /console/requests/:id/live: the request's live facts; once final, the page reloads. */
async function liveDetail(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const [row] = await requestRows(kit.ctx, s.accountId, [c.params.id ?? ""]);
  if (!row) throw new DomainError("not_found", `No request ${c.params.id}.`);
  const facts = liveFacts(row, cancelForm(row.id, csrfField(s), `/console/requests/${row.id}`));
  // Final: the whole page again (price, outputs, timeline), once, instead of the facts alone.
  return htmlResponse(facts, 200, row.timing.live ? {} : { "hx-refresh": "true" });
}

/** POST /console/requests/:id/cancel: 303 back to the list or the request, with the outcome. */
async function cancel(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const back = backOf(field(c.form, "back"));
  const r = await tryCancel(kit.ctx, { accountId: s.accountId }, c.params.id ?? "");
  return redirect(
    withNotice(
      back,
      r.cancelled
        ? { kind: "cancelled", id: r.job.id, status: null }
        : { kind: "not-cancellable", id: r.job.id, status: r.now.status },
    ),
  );
}

export function requestsLivePages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/requests/live",
      kit.page(async (c) => await liveList(c, kit)),
    )
    .get(
      "/console/requests/:id/live",
      kit.page(async (c) => await liveDetail(c, kit)),
    )
    .post(
      "/console/requests/:id/cancel",
      kit.action(async (c) => await cancel(c, kit)),
    );
}
