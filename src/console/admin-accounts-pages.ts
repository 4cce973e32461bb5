/**
 * The operator's accounts (/console/admin, /console/admin/accounts/:id): search and list, one
 * account's figures, credit and adjust with a required reason through the admin API's operations
 * (src/admin/operations.ts); reads through src/admin/directory.ts. HTML in admin-accounts-view.ts.
 */
import { Elysia } from "elysia";
import {
  creditAccount,
  adjustAccount as doAdjust,
  requireAccount as operatorAccount,
  requireReason,
} from "../admin/operations.ts";
import { decimalFromInput } from "../http/inputs.ts";
import { formatMicro } from "../lib/money.ts";
import type { CreatedAccount } from "./admin-account-sections-view.ts";
import { accountDetail, accountIdParam, accountsList, NEW_ACCOUNT } from "./admin-accounts-shared.ts";
import { shown } from "./admin-view.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  type PageContext,
  redirect,
  requireOperator,
} from "./kit.ts";

/** Fixed notices of the account actions' redirects (nothing of the URL is echoed). */
const DONE: Record<string, string> = {
  created: "The account was created. Its Default key was shown once.",
  disabled: "The account is disabled: its keys are refused and its sessions ended.",
  enabled: "The account is enabled again: its keys work.",
  revoked: "The key is revoked: requests with it are refused.",
};

async function accountPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const done = (c.url.searchParams.get("done") ?? "").slice(0, 200);
  const created = await kit.people.sessions.takeFlash<CreatedAccount>(c.session.sessionId, NEW_ACCOUNT);
  // Only our own redirect's wording is shown back.
  return await accountDetail(c, kit, {
    created,
    done: /^(Credited|Adjusted by) -?[0-9.]+ [A-Z]{3}\.$/.test(done)
      ? done
      : done === "created" && created
        ? null
        : (DONE[done] ?? null),
  });
}

/** Credit (a positive amount) or adjust (signed) the account, with the required reason. */
async function changeMoney(c: ActionContext, kit: ConsoleKit, kind: "credit" | "adjust"): Promise<Response> {
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
}

export function adminAccountsPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/admin",
      kit.page((c) => accountsList(c, kit)),
    )
    .get(
      "/console/admin/accounts/:id",
      kit.page((c) => accountPage(c, kit)),
    )
    .post(
      "/console/admin/accounts/:id/credit",
      kit.action((c) => changeMoney(c, kit, "credit")),
    )
    .post(
      "/console/admin/accounts/:id/adjust",
      kit.action((c) => changeMoney(c, kit, "adjust")),
    );
}
