/**
 * In-process payments tests: the console app (test/console/helpers.ts) with [payments] pointing at
 * the local Stripe and YooKassa mocks, whose webhooks go straight into the app. The clock (epoch
 * seconds) is shared by the app and the Stripe mock's signatures, so tests can move time.
 */
import { liveSettingsFrom } from "../../src/config/load.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { nowSeconds } from "../../src/lib/time.ts";
import { consoleApp, PASSWORD } from "../console/helpers.ts";
import { STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, startStripeMock } from "../helpers/stripe-mock.ts";
import { startYooKassaMock, YOOKASSA_SECRET_KEY, YOOKASSA_SHOP_ID } from "../helpers/yookassa-mock.ts";

export const PAYMENT_ENV = {
  TEST_STRIPE_SK: STRIPE_SECRET_KEY,
  TEST_STRIPE_WHSEC: STRIPE_WEBHOOK_SECRET,
  TEST_YOOKASSA_SK: YOOKASSA_SECRET_KEY,
};

export function paymentsConfig(stripeUrl: string, yooUrl: string, extra: Record<string, unknown> = {}) {
  return {
    payments: {
      usd: { minimum: "5", maximum: "500", presets: ["10", "25"] },
      rub: { minimum: "100", maximum: "50000", presets: ["1000"] },
      stripe: {
        secret_key_env: "TEST_STRIPE_SK",
        webhook_secret_env: "TEST_STRIPE_WHSEC",
        api_base: stripeUrl,
        checkout_origin: stripeUrl,
        timeout_seconds: 2,
      },
      yookassa: {
        shop_id: YOOKASSA_SHOP_ID,
        secret_key_env: "TEST_YOOKASSA_SK",
        api_base: `${yooUrl}/v3`,
        checkout_origin: yooUrl,
        timeout_seconds: 2,
      },
      ...extra,
    },
  } as ConfigFile;
}

export async function paymentsApp() {
  const clock = { now: nowSeconds() };
  const t = await consoleApp({ now: () => clock.now });
  const stripe = await startStripeMock({ now: () => clock.now });
  const yoo = await startYooKassaMock();
  const handle = (r: Request) => t.app.handle(r);
  stripe.target = handle;
  yoo.target = handle;
  t.ctx.live = {
    ...t.ctx.live,
    payments: liveSettingsFrom(paymentsConfig(stripe.url, yoo.url), PAYMENT_ENV).payments,
  };

  /** A RUB account with an owner; returns its id and the owner's email. */
  const rubOwner = async (email: string) => {
    const { account } = await t.ctx.accounts.createAccount(`rub ${email}`, "RUB");
    const { url } = await t.people.invites.createInvite({ email, accountId: account.id, role: "owner" });
    await t.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    return account.id;
  };
  /** Signs in, opens the billing page (for its CSRF token) and posts the checkout form. */
  const checkout = async (email: string, fields: Record<string, string>) => {
    const b = await t.signedIn(email);
    await b.page("/console/billing");
    const res = await b.post("/console/billing/checkout", fields);
    return { b, res };
  };
  /** A RUB account whose owner started a YooKassa checkout: its id, the mock's payment and the order. */
  const rubPending = async (email: string, amount = "1500") => {
    const accountId = await rubOwner(email);
    const { res } = await checkout(email, { amount, provider: "yookassa" });
    if (res.status !== 303) throw new Error(`checkout: ${res.status}`);
    const payment = [...yoo.payments.values()].at(-1)!;
    const order = (await t.ctx.payments.orders.byProviderRef("yookassa", payment.id))!;
    return { accountId, payment, order };
  };
  const balance = async (accountId: string) => (await t.ctx.accounts.getAccount(accountId))!.balance_micro;
  const topups = async (accountId: string) =>
    (await t.ctx.sql.get<{ n: bigint; s: bigint | null }>(
      "SELECT count(*) AS n, sum(amount_micro) AS s FROM ledger_entries WHERE account_id = ? AND source = 'TOPUP'",
      [accountId],
    ))!;
  const outcomes = async (orderId?: string) =>
    (
      await (orderId === undefined
        ? t.ctx.sql.all<{ outcome: string }>("SELECT outcome FROM payment_notifications ORDER BY id")
        : t.ctx.sql.all<{ outcome: string }>(
            "SELECT outcome FROM payment_notifications WHERE order_id = ? ORDER BY id",
            [orderId],
          ))
    ).map((r) => r.outcome);
  const close = () => {
    stripe.stop();
    yoo.stop();
  };
  return { ...t, clock, stripe, yoo, rubOwner, checkout, rubPending, balance, topups, outcomes, close };
}
