/**
 * Billing (`/console/billing`): the page (billing-view.ts) and paying (billing-checkout-pages.ts and
 * billing-checkout-view.ts: the checkout form, the account's payments and their receipts).
 */
import { Elysia } from "elysia";
import { billingPage } from "./billing-view.ts";
import type { ConsoleKit } from "./kit.ts";

export function billingPages(kit: ConsoleKit) {
  return new Elysia().get(
    "/console/billing",
    kit.page((c) => billingPage(kit, c)),
  );
}
