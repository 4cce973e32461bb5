/**
 * The one interface every payment provider implements (docs/billing.md, "Payments"). A provider
 * makes a hosted checkout for an order and turns an incoming notification into verified facts
 * about a payment; what those facts are worth (credit, duplicate, mismatch...) is decided once,
 * in service.ts, for every provider alike.
 */
import { DomainError } from "../lib/errors.ts";

export type ProviderName = "stripe" | "yookassa";
export type PaymentCurrency = "USD" | "RUB";

/** Each provider takes exactly one currency. */
export const PROVIDER_CURRENCY: Record<ProviderName, PaymentCurrency> = { stripe: "USD", yookassa: "RUB" };
export const PROVIDER_LABEL: Record<ProviderName, string> = { stripe: "Stripe", yookassa: "YooKassa" };
export const PROVIDERS: readonly ProviderName[] = ["stripe", "yookassa"];

/** What a provider needs to know about an order to make its checkout. */
export interface CheckoutOrder {
  id: string;
  accountId: string;
  currency: PaymentCurrency;
  amountMicro: bigint;
  /** Epoch seconds. */
  expiresAt: number;
  email: string | null;
  /** Where the provider sends the customer back (paid or not). */
  returnUrl: string;
  cancelUrl: string;
}

export interface Checkout {
  /** The provider's id of the checkout (Stripe Checkout Session id, YooKassa payment id). */
  ref: string;
  /** The provider's hosted page the customer is redirected to. */
  url: string;
}

/**
 * What the provider itself says about one payment: from a signature-verified event (Stripe) or
 * from its API (YooKassa). Amounts in minor units (cents, kopecks) as the provider reports them.
 */
export interface PaymentFacts {
  provider: ProviderName;
  /** The event (for the log): Stripe's evt_ id, YooKassa's payment id + event. */
  eventId: string;
  eventType: string;
  /** Whether this event may credit (a completed or succeeded payment event). */
  creditEvent: boolean;
  /** The event closes the payment without money (expired, canceled, failed): the order follows. */
  closes: "expired" | "canceled" | "failed" | null;
  ref: string;
  paid: boolean;
  amountMinor: bigint | null;
  /** Lower-cased ISO code as the provider reports it. */
  currency: string | null;
  /** The order ids the payment carries (client_reference_id and metadata). */
  orderIds: (string | null)[];
  /** The account id the payment carries in its metadata. */
  accountId: string | null;
}

/** A notification that could not be verified: forged, or (Stripe) signed too long ago. */
export class UnverifiedNotification extends Error {
  constructor(
    readonly outcome: "forged" | "expired",
    message: string,
    readonly claimedEventId: string | null = null,
  ) {
    super(message);
  }
}

export interface PaymentProvider {
  readonly name: ProviderName;
  readonly currency: PaymentCurrency;
  /** The origin of the hosted checkout pages (the only place a customer is redirected to). */
  readonly checkoutOrigin: string;
  createCheckout(order: CheckoutOrder): Promise<Checkout>;
}

/** micro-units -> minor units (cents); orders are whole cents by construction (CHECK in 013). */
export function microToMinor(micro: bigint): bigint {
  return micro / 10_000n;
}

/** The contract error for anything a provider's API did wrong or did not answer in time. */
export function providerError(provider: ProviderName, what: string): DomainError {
  return new DomainError(
    "payment_provider_error",
    `${PROVIDER_LABEL[provider]} could not be reached or refused the request (${what.slice(0, 200)}); nothing was charged. Try again in a moment.`,
  );
}

/** A checkout URL must be on the provider's configured checkout origin, never anywhere else. */
export function checkCheckoutUrl(provider: ProviderName, url: unknown, origin: string): string {
  if (typeof url !== "string") throw providerError(provider, "no checkout URL in the answer");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw providerError(provider, "the checkout URL is not a URL");
  }
  if (parsed.origin !== origin)
    throw providerError(provider, `the checkout URL is not on ${origin} (checkout_origin)`);
  return parsed.href;
}
