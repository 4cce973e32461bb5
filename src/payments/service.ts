/**
 * Payments (docs/billing.md, "Payments"): start a checkout, take a provider's notification, refund.
 *
 * - An order is written (status created) BEFORE the provider is called, so every checkout the
 *   customer can reach has a row; a provider failure marks it failed and answers 502.
 * - A notification is believed only as far as the provider vouches for it: Stripe's signature
 *   (stripe.ts), YooKassa's API (yookassa.ts). The facts must then match the order in every respect
 *   (provider, checkout id, order id, account, currency, amount) and say "paid".
 * - Crediting is ONE transaction: the conditional UPDATE of the order to paid (from created,
 *   pending or expired) and its TOPUP ledger entry naming the order. A replay, a duplicate, or eight
 *   at once find the order paid and credit nothing; the ledger's unique ref_id index backs this up.
 * - Every notification is logged with its outcome (payment_notifications).
 */

import type { AccountStore } from "../accounts/store.ts";
import { requireReason } from "../admin/operations.ts";
import type { PaymentSettings } from "../config/schema.ts";
import type { Sql } from "../db/sql.ts";
import { Stmt, serviceIn } from "../db/store.ts";
import { balanceLimitError, isBalanceLimitError } from "../ledger/balance-limit.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { DomainError } from "../lib/errors.ts";
import { formatMicro, MAX_BALANCE_MICRO } from "../lib/money.ts";
import { nowSeconds } from "../lib/time.ts";
import { type NotificationOutcome, type OrderRow, OrderStore } from "./order-store.ts";
import {
  microToMinor,
  type PaymentCurrency,
  type PaymentFacts,
  type PaymentProvider,
  PROVIDER_CURRENCY,
  PROVIDER_LABEL,
  PROVIDERS,
  type ProviderName,
  providerError,
  UnverifiedNotification,
} from "./provider.ts";
import { StripeProvider } from "./stripe.ts";
import { YOOKASSA_PAYMENT_ID, YooKassaProvider } from "./yookassa.ts";

/** Orders one account may start per hour (each one calls the provider). */
export const CHECKOUTS_PER_HOUR = 20;
/** How long notifications naming no order of ours are kept (docs/billing.md). */
export const UNLINKED_NOTIFICATION_DAYS = 30;

export const DISABLED_PAYMENTS: PaymentSettings = {
  amounts: {
    USD: { minimumMicro: 5_000_000n, maximumMicro: 1_000_000_000n, presetsMicro: [] },
    RUB: { minimumMicro: 500_000_000n, maximumMicro: 100_000_000_000n, presetsMicro: [] },
  },
  orderTtlSeconds: 86_400,
  stripe: null,
  yookassa: null,
};

export interface PaymentServiceOptions {
  publicUrl: string;
  settings: () => PaymentSettings;
  /** Epoch seconds (the ledger's clock). */
  now?: () => number;
}

/** How a notification was handled; `status` is what the provider is answered. */
export interface NotificationResult {
  outcome: NotificationOutcome;
  orderId: string | null;
}

export function isProviderName(v: string): v is ProviderName {
  return (PROVIDERS as readonly string[]).includes(v);
}

export class PaymentService {
  readonly orders: OrderStore;
  private readonly now: () => number;
  private readonly cache = new WeakMap<object, PaymentProvider>();
  private readonly recent;

  constructor(
    private readonly sql: Sql,
    private readonly accounts: AccountStore,
    private readonly ledger: Ledger,
    private readonly options: PaymentServiceOptions,
  ) {
    this.orders = new OrderStore(sql);
    this.now = options.now ?? nowSeconds;
    this.recent = new Stmt<{ n: bigint }, [string, number]>(
      sql,
      "SELECT count(*) AS n FROM orders WHERE account_id = ? AND created_at > ?",
    );
  }

  /** Runs `fn` in one transaction, with `self` a view of this service whose stores write in it. */
  private async atomic<T>(fn: (self: this, tx: Sql) => Promise<T>): Promise<T> {
    return await this.sql.tx(
      async (tx) => await fn(serviceIn(this, tx, ["orders", "accounts", "ledger"]), tx),
    );
  }

  settings(): PaymentSettings {
    return this.options.settings();
  }

  /** The provider, when configured (built once per settings object: a reload makes a new one). */
  provider(name: ProviderName): PaymentProvider | null {
    const s = this.settings();
    const conf = name === "stripe" ? s.stripe : s.yookassa;
    if (!conf) return null;
    let p = this.cache.get(conf);
    if (!p) {
      p = name === "stripe" ? new StripeProvider(s.stripe!) : new YooKassaProvider(s.yookassa!);
      this.cache.set(conf, p);
    }
    return p;
  }

  /** The providers a customer paying in `currency` may choose. */
  enabledFor(currency: PaymentCurrency): ProviderName[] {
    return PROVIDERS.filter((p) => PROVIDER_CURRENCY[p] === currency && this.provider(p) !== null);
  }

  /** Origins of the enabled providers' checkout pages (the console's CSP lets forms go there). */
  checkoutOrigins(): string[] {
    const s = this.settings();
    return [s.stripe?.checkoutOrigin, s.yookassa?.checkoutOrigin].filter((o): o is string => !!o);
  }

  /**
   * Writes the order, then asks the provider for a hosted checkout; returns the URL to redirect to.
   * Validation: an enabled provider of the account's currency, an amount within the operator's
   * minimum and maximum in whole cents, at most CHECKOUTS_PER_HOUR orders per account per hour.
   */
  async startCheckout(input: {
    accountId: string;
    personId: string | null;
    email: string | null;
    provider: string;
    amountMicro: bigint;
  }): Promise<{ order: OrderRow; url: string }> {
    if (!isProviderName(input.provider))
      throw new DomainError("validation_error", "Choose Stripe or YooKassa.", { param: "provider" });
    const provider = this.provider(input.provider);
    if (!provider)
      throw new DomainError("validation_error", `${PROVIDER_LABEL[input.provider]} is not enabled here.`, {
        param: "provider",
      });
    const account = await this.accounts.getAccount(input.accountId);
    if (!account) throw new DomainError("not_found", `No account ${input.accountId}.`);
    if (account.currency !== provider.currency)
      throw new DomainError(
        "currency_mismatch",
        `${PROVIDER_LABEL[provider.name]} takes ${provider.currency}; this account is in ${account.currency}.`,
        { param: "provider" },
      );
    const limits = this.settings().amounts[provider.currency];
    const amount = input.amountMicro;
    if (amount < limits.minimumMicro || amount > limits.maximumMicro)
      throw new DomainError(
        "validation_error",
        `The amount must be from ${formatMicro(limits.minimumMicro)} to ${formatMicro(limits.maximumMicro)} ${provider.currency}.`,
        { param: "amount" },
      );
    if (amount % 10_000n !== 0n)
      throw new DomainError("validation_error", "The amount may have at most 2 decimal places.", {
        param: "amount",
      });
    // Take no money that could not be credited (the notification would be refused the same way).
    if (account.balance_micro > MAX_BALANCE_MICRO - amount)
      throw balanceLimitError(account.currency, account.balance_micro, amount);
    const now = this.now();
    if (((await this.recent.get(account.id, now - 3600))?.n ?? 0n) >= BigInt(CHECKOUTS_PER_HOUR))
      throw new DomainError(
        "rate_limited",
        `At most ${CHECKOUTS_PER_HOUR} checkouts an hour per account; try again later.`,
        { retryAfterSeconds: 600 },
      );
    const order = await this.orders.create({
      accountId: account.id,
      personId: input.personId,
      provider: provider.name,
      currency: provider.currency,
      amountMicro: amount,
      now,
      ttlSeconds: this.settings().orderTtlSeconds,
    });
    const back = `${this.options.publicUrl}/console/billing/return?order=${order.id}`;
    let url: string;
    let attached: OrderRow | null;
    try {
      const checkout = await provider.createCheckout({
        id: order.id,
        accountId: account.id,
        currency: provider.currency,
        amountMicro: amount,
        expiresAt: Number(order.expires_at),
        email: input.email,
        returnUrl: back,
        cancelUrl: `${back}&canceled=1`,
      });
      url = checkout.url;
      attached = await this.orders.attachCheckout(order.id, checkout.ref, checkout.url);
    } catch (err) {
      const known =
        err instanceof DomainError ? err : providerError(provider.name, (err as Error)?.message ?? "");
      await this.orders.close(order.id, "failed", known.message.slice(0, 500));
      throw known;
    }
    if (!attached) throw new DomainError("conflict", `Order ${order.id} is no longer open.`);
    return { order: attached, url };
  }

  /** POST /payments/stripe/webhook: the raw body and its Stripe-Signature header. */
  async stripeNotification(rawBody: string, signature: string | null): Promise<NotificationResult> {
    const stripe = this.provider("stripe") as StripeProvider | null;
    if (!stripe) throw new DomainError("not_found", "Stripe payments are not enabled.");
    let facts: PaymentFacts;
    try {
      facts = await stripe.verify(rawBody, signature, this.now() * 1000);
    } catch (err) {
      if (!(err instanceof UnverifiedNotification)) throw err;
      await this.log("stripe", null, err.claimedEventId, null, err.outcome, `unverified: ${err.message}`);
      throw new DomainError("validation_error", "The Stripe-Signature header does not verify.", {
        param: "stripe-signature",
      });
    }
    return this.apply(facts);
  }

  /**
   * POST /payments/yookassa/webhook: the notification is unsigned, so only its payment id is used:
   * the payment is fetched from YooKassa's API and the API's answer decides. A notification naming
   * no order of ours is logged and dropped without calling the API.
   */
  async yookassaNotification(body: unknown): Promise<NotificationResult> {
    const yoo = this.provider("yookassa") as YooKassaProvider | null;
    if (!yoo) throw new DomainError("not_found", "YooKassa payments are not enabled.");
    const n = (body ?? {}) as {
      type?: unknown;
      event?: unknown;
      object?: { id?: unknown; metadata?: unknown };
    };
    const id = n.object?.id;
    if (
      n.type !== "notification" ||
      typeof n.event !== "string" ||
      n.event.length > 100 ||
      typeof id !== "string" ||
      !YOOKASSA_PAYMENT_ID.test(id)
    ) {
      await this.log("yookassa", null, null, null, "forged", "malformed notification");
      throw new DomainError("validation_error", "Not a YooKassa payment notification.");
    }
    const event = n.event;
    const claimedOrder = (n.object?.metadata as { order_id?: unknown } | undefined)?.order_id;
    const known =
      (await this.orders.byProviderRef("yookassa", id)) ??
      (typeof claimedOrder === "string" ? await this.orders.get(claimedOrder) : null);
    if (!event.startsWith("payment.")) {
      await this.log(
        "yookassa",
        known?.id ?? null,
        `${id}:${event}`,
        event,
        "ignored",
        "not a payment event",
      );
      return { outcome: "ignored", orderId: known?.id ?? null };
    }
    if (known?.provider !== "yookassa") {
      await this.log(
        "yookassa",
        null,
        `${id}:${event}`,
        event,
        "unknown_order",
        "no order of ours names this payment",
      );
      return { outcome: "unknown_order", orderId: null };
    }
    let facts: PaymentFacts;
    try {
      facts = await yoo.verify(id, event);
    } catch (err) {
      if (err instanceof UnverifiedNotification) {
        await this.log("yookassa", known.id, `${id}:${event}`, event, "forged", err.message);
        throw new DomainError("validation_error", "YooKassa does not confirm this payment.");
      }
      await this.log("yookassa", known.id, `${id}:${event}`, event, "verify_failed", (err as Error).message);
      throw err instanceof DomainError ? err : providerError("yookassa", "verification failed");
    }
    return this.apply(facts);
  }

  /** What verified facts are worth for their order: credit once, or log why not. */
  private async apply(facts: PaymentFacts): Promise<NotificationResult> {
    const order = await this.findOrder(facts);
    const log = async (outcome: NotificationOutcome, detail: string | null, via: PaymentService = this) => {
      await via.log(facts.provider, order?.id ?? null, facts.eventId, facts.eventType, outcome, detail);
      return { outcome, orderId: order?.id ?? null };
    };
    if (!facts.creditEvent && !facts.closes) return log("ignored", "an event that neither pays nor closes");
    if (!order) return log("unknown_order", `no order for ${facts.ref || "this event"}`);
    const wrong = this.mismatches(order, facts);
    if (wrong.length) return log("mismatch", wrong.join("; "));
    if (facts.closes) {
      const closed = await this.orders.close(
        order.id,
        facts.closes,
        `${PROVIDER_LABEL[facts.provider]}: ${facts.eventType}`,
      );
      return log(
        closed ? "closed" : "ignored",
        closed ? `order ${facts.closes}` : `order already ${order.status}`,
      );
    }
    if (!facts.paid) return log("not_paid", "the provider does not report it paid (yet)");
    try {
      return await this.credit(order, facts, log);
    } catch (err) {
      // The credit would pass the maximum balance: nothing was written (the order is still open),
      // so the answer is the ledger's 400 naming the limit and the provider sends the notification
      // again later; the money was taken, so it is credited once the operator has made room.
      if (isBalanceLimitError(err)) await log("mismatch", err.message);
      throw err;
    }
  }

  /** Marks the order paid and credits it, in one transaction (once: a compare-and-swap on its status). */
  private async credit(
    order: OrderRow,
    facts: PaymentFacts,
    log: (
      outcome: NotificationOutcome,
      detail: string | null,
      via?: PaymentService,
    ) => Promise<NotificationResult>,
  ): Promise<NotificationResult> {
    return await this.atomic(async (self): Promise<NotificationResult> => {
      const before = (await self.orders.get(order.id))!;
      const paid = await self.orders.markPaid(order.id, self.now(), facts.ref);
      if (!paid) {
        // Re-read: on PostgreSQL a racing notification may have paid it since `before` was read.
        return (await self.orders.get(order.id))!.status === "paid"
          ? await log("duplicate", "already credited", self)
          : await log("mismatch", `the order is ${before.status}`, self);
      }
      await self.ledger.topUp(
        order.account_id,
        order.amount_micro,
        `${PROVIDER_LABEL[facts.provider]} payment ${facts.ref}`,
        "TOPUP",
        order.id,
      );
      return before.status === "expired"
        ? await log(
            "credited_late",
            "paid after the order expired: the money was taken, so it is credited",
            self,
          )
        : await log("credited", null, self);
    });
  }

  private async findOrder(facts: PaymentFacts): Promise<OrderRow | null> {
    if (facts.ref) {
      const byRef = await this.orders.byProviderRef(facts.provider, facts.ref);
      if (byRef) return byRef;
    }
    const id = facts.orderIds.find((x): x is string => typeof x === "string");
    return id ? await this.orders.get(id) : null;
  }

  private mismatches(order: OrderRow, f: PaymentFacts): string[] {
    const out: string[] = [];
    if (order.provider !== f.provider) out.push(`the order is for ${order.provider}`);
    if (order.provider_ref !== null && order.provider_ref !== f.ref)
      out.push(`checkout ${f.ref} is not the order's`);
    if (f.orderIds.some((id) => id !== order.id)) out.push("the order id differs");
    if (f.accountId !== order.account_id) out.push("the account differs");
    if (f.creditEvent) {
      if (f.currency !== order.currency.toLowerCase())
        out.push(`currency ${f.currency} is not ${order.currency}`);
      if (f.amountMinor !== microToMinor(order.amount_micro))
        out.push(`amount ${f.amountMinor} is not ${microToMinor(order.amount_micro)}`);
    }
    return out;
  }

  private async log(
    provider: ProviderName,
    orderId: string | null,
    eventId: string | null,
    eventType: string | null,
    outcome: NotificationOutcome,
    detail: string | null,
  ): Promise<void> {
    await this.orders.log({ provider, orderId, eventId, eventType, outcome, detail, at: this.now() });
  }

  /** The sweep: open orders past their expiry become expired (a late genuine payment still credits). */
  async expireDue(): Promise<number> {
    await this.orders.pruneUnlinked(this.now() - UNLINKED_NOTIFICATION_DAYS * 86_400);
    return (await this.orders.expireDue(this.now())).length;
  }

  /**
   * A refund of a paid order (the CLI and the admin API): a negative ADMIN adjustment naming the
   * order and the order's refunded amount, in one transaction. Never more than paid minus already
   * refunded, never below what open jobs hold (both 409 conflict). `amountMicro` null: the rest.
   */
  async refund(orderId: string, amountMicro: bigint | null, reasonText: string): Promise<OrderRow> {
    const reason = requireReason(reasonText, "A refund");
    return await this.atomic(async (self) => {
      const order = await self.orders.get(orderId);
      if (!order) throw new DomainError("not_found", `No order ${orderId}.`, { param: "order_id" });
      if (order.status !== "paid")
        throw new DomainError(
          "conflict",
          `Only a paid order can be refunded; ${order.id} is ${order.status}.`,
        );
      const left = order.amount_micro - order.refunded_micro;
      const amount = amountMicro ?? left;
      if (left === 0n) throw new DomainError("conflict", `Order ${order.id} is already refunded in full.`);
      if (amount <= 0n)
        throw new DomainError("validation_error", "The refund must be above 0.", { param: "amount" });
      if (amount > left)
        throw new DomainError(
          "conflict",
          `At most ${formatMicro(left)} ${order.currency} of ${order.id} can still be refunded.`,
          { param: "amount" },
        );
      const updated = await self.orders.addRefund(order.id, amount);
      if (!updated) throw new DomainError("conflict", `Order ${order.id} changed; try again.`);
      await self.ledger.adjust(order.account_id, -amount, `refund of ${order.id}: ${reason}`, order.id);
      return updated;
    });
  }
}
