/**
 * The operator's providers (/console/admin/providers: each circuit, the same figures as GET
 * /admin/v1/providers through src/admin/providers.ts) and exchange rates (/console/admin/fx: list and
 * set, through src/admin/operations.ts). HTML in admin-providers-view.ts.
 */
import { Elysia } from "elysia";
import { setFxRate } from "../admin/operations.ts";
import { providerHealth } from "../admin/providers.ts";
import { FX_CURRENCIES, isFxCurrency } from "../fx/store.ts";
import { DomainError } from "../lib/errors.ts";
import { fxBody, providersBody } from "./admin-providers-view.ts";
import { adminPage, shown } from "./admin-view.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  type PageContext,
  redirect,
  requireOperator,
} from "./kit.ts";

async function providersPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  return await adminPage(c, "Providers", "/console/admin/providers", providersBody(providerHealth(kit.ctx)));
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
  return adminPage(c, "Exchange rates", "/console/admin/fx", fxBody(c.session, rates, done, state), status);
}

async function setRate(c: ActionContext, kit: ConsoleKit): Promise<Response> {
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
}

export function adminProvidersPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/admin/providers",
      kit.page((c) => providersPage(c, kit)),
    )
    .get(
      "/console/admin/fx",
      kit.page((c) => fxPage(c, kit)),
    )
    .post(
      "/console/admin/fx",
      kit.action((c) => setRate(c, kit)),
    );
}
