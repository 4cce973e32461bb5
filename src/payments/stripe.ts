/**
 * Stripe Checkout (USD) through the official `stripe` package (docs/billing.md, "Stripe Checkout").
 * Under Bun the package loads its fetch/SubtleCrypto build: requests go through
 * Stripe.createFetchHttpClient() to the configured host, port and protocol (tests: a local mock),
 * and webhooks are verified with the package's own constructEventAsync (Stripe-Signature,
 * 300-second tolerance, over the raw body).
 *
 * The package is loaded on first use, not at start: with its Node modules (http, https, crypto) it
 * was about 2 ms of every start and 1.5 MB of idle memory for operators without Stripe (issue 19).
 */
import type Stripe from "stripe";
import type { PaymentSettings } from "../config/schema.ts";
import { importEntry } from "../lib/entries.ts";
import {
  type Checkout,
  type CheckoutOrder,
  checkCheckoutUrl,
  microToMinor,
  type PaymentFacts,
  type PaymentProvider,
  providerError,
  UnverifiedNotification,
} from "./provider.ts";

/** Stripe's own default: an event signed longer ago than this is refused (replays). */
export const STRIPE_TOLERANCE_SECONDS = 300;

type StripeSettings = NonNullable<PaymentSettings["stripe"]>;

/** Events that may credit an order; the others only close it, or are ignored. */
const CREDIT_EVENTS = new Set(["checkout.session.completed", "checkout.session.async_payment_succeeded"]);
const CLOSING_EVENTS: Record<string, PaymentFacts["closes"]> = {
  "checkout.session.expired": "expired",
  "checkout.session.async_payment_failed": "failed",
};

export class StripeProvider implements PaymentProvider {
  readonly name = "stripe" as const;
  readonly currency = "USD" as const;
  readonly checkoutOrigin: string;
  #client: Promise<Stripe> | null = null;

  constructor(private readonly settings: StripeSettings) {
    this.checkoutOrigin = settings.checkoutOrigin;
  }

  private client(): Promise<Stripe> {
    if (this.#client) return this.#client;
    const settings = this.settings;
    const client = stripePackage().then(
      (Package) =>
        new Package(settings.secretKey, {
          host: settings.api.host,
          port: settings.api.port,
          protocol: settings.api.protocol,
          httpClient: Package.createFetchHttpClient(),
          timeout: settings.timeoutMs,
          // No retry: the customer waits at most one timeout; a new click makes a new order. (A
          // retry would be safe: the order id is the idempotency key.)
          maxNetworkRetries: 0,
          telemetry: false,
        }),
    );
    // A failed load or set-up is not kept: the next call tries again.
    client.catch(() => {
      if (this.#client === client) this.#client = null;
    });
    this.#client = client;
    return client;
  }

  async createCheckout(order: CheckoutOrder): Promise<Checkout> {
    const metadata = { order_id: order.id, account_id: order.accountId };
    let session: Stripe.Checkout.Session;
    try {
      const client = await this.client();
      session = await client.checkout.sessions.create(
        {
          mode: "payment",
          client_reference_id: order.id,
          metadata,
          payment_intent_data: { metadata, description: `gengate top-up ${order.id}` },
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: "usd",
                unit_amount: Number(microToMinor(order.amountMicro)),
                product_data: { name: "Balance top-up" },
              },
            },
          ],
          ...(order.email ? { customer_email: order.email } : {}),
          success_url: order.returnUrl,
          cancel_url: order.cancelUrl,
          // Stripe accepts 30 minutes to 24 hours; end a little before the order does.
          expires_at: order.expiresAt - 300,
        },
        { idempotencyKey: order.id },
      );
    } catch (err) {
      throw providerError("stripe", stripeMessage(err));
    }
    if (typeof session?.id !== "string" || !/^[A-Za-z0-9_]{1,255}$/.test(session.id))
      throw providerError("stripe", "no session id in the answer");
    return { ref: session.id, url: checkCheckoutUrl("stripe", session.url, this.checkoutOrigin) };
  }

  /**
   * Verifies a webhook (raw body and its Stripe-Signature header) with the package's own check and
   * returns what the event says, or throws UnverifiedNotification (forged, or signed too long ago).
   */
  async verify(rawBody: string, signature: string | null, nowMs: number): Promise<PaymentFacts> {
    let event: Stripe.Event;
    try {
      event = await (await stripePackage()).webhooks.constructEventAsync(
        rawBody,
        signature ?? "",
        this.settings.webhookSecret,
        STRIPE_TOLERANCE_SECONDS,
        undefined,
        nowMs,
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const outcome = /tolerance/i.test(message) ? "expired" : "forged";
      throw new UnverifiedNotification(outcome, message.split("\n")[0]!.slice(0, 200), claimedId(rawBody));
    }
    const object = (event.data?.object ?? {}) as Partial<Stripe.Checkout.Session>;
    const isSession = object.object === "checkout.session";
    const metadata = (object.metadata ?? {}) as Record<string, string>;
    return {
      provider: "stripe",
      eventId: String(event.id),
      eventType: String(event.type),
      creditEvent: isSession && CREDIT_EVENTS.has(event.type) && object.mode === "payment",
      closes: isSession ? (CLOSING_EVENTS[event.type] ?? null) : null,
      ref: typeof object.id === "string" ? object.id : "",
      paid: object.payment_status === "paid",
      amountMinor: typeof object.amount_total === "number" ? BigInt(object.amount_total) : null,
      currency: typeof object.currency === "string" ? object.currency.toLowerCase() : null,
      orderIds: [object.client_reference_id ?? null, metadata.order_id ?? null],
      accountId: metadata.account_id ?? null,
    };
  }
}

/** The `stripe` package's constructor (loaded once, on first use). */
let loaded: Promise<typeof Stripe> | null = null;
function stripePackage(): Promise<typeof Stripe> {
  if (loaded) return loaded;
  const pkg = importEntry<typeof import("../entries/stripe.ts")>("stripe").then((m) => m.default);
  pkg.catch(() => {
    if (loaded === pkg) loaded = null; // not kept: the next call tries again
  });
  loaded = pkg;
  return pkg;
}

/** The event id a body claims (for the log of an unverified one), if it has one. */
function claimedId(raw: string): string | null {
  try {
    const id = (JSON.parse(raw) as { id?: unknown }).id;
    return typeof id === "string" ? id.slice(0, 100) : null;
  } catch {
    return null;
  }
}

function stripeMessage(err: unknown): string {
  if (err && typeof err === "object") {
    const e = err as { type?: string; message?: string; statusCode?: number };
    return `${e.type ?? "error"}${e.statusCode ? ` ${e.statusCode}` : ""}: ${(e.message ?? "").split("\n")[0]}`;
  }
  return String(err);
}
