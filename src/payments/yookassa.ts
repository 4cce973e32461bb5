/**
 * YooKassa (RUB) through its REST API v3 with fetch (docs/billing.md, "YooKassa"). Requests go only
 * to the configured api_base, with HTTP Basic auth (shop id : secret key) and a time limit. A
 * notification is unsigned, so it is never believed: its payment is fetched from the API
 * (`GET /payments/{id}`) and only what the API says counts.
 */
import type { PaymentSettings } from "../config/schema.ts";
import { readAllCapped } from "../lib/read-capped.ts";
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

type YooKassaSettings = NonNullable<PaymentSettings["yookassa"]>;

/** YooKassa payment ids (UUID-like); anything else in a notification is refused before any call. */
export const YOOKASSA_PAYMENT_ID = /^[0-9A-Za-z-]{8,64}$/;
const ANSWER_MAX = 256 * 1024;

interface YooPayment {
  id?: unknown;
  status?: unknown;
  paid?: unknown;
  amount?: { value?: unknown; currency?: unknown };
  confirmation?: { confirmation_url?: unknown };
  metadata?: Record<string, unknown>;
}

/** "100.00" -> 10000n kopecks; null for anything else. */
export function minorFromValue(value: unknown): bigint | null {
  if (typeof value !== "string") return null;
  const m = /^(\d{1,15})(?:\.(\d{1,2}))?$/.exec(value);
  if (!m) return null;
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? "").padEnd(2, "0"));
}

function valueFromMicro(micro: bigint): string {
  const minor = microToMinor(micro);
  return `${minor / 100n}.${(minor % 100n).toString().padStart(2, "0")}`;
}

export class YooKassaProvider implements PaymentProvider {
  readonly name = "yookassa" as const;
  readonly currency = "RUB" as const;
  readonly checkoutOrigin: string;

  constructor(private readonly settings: YooKassaSettings) {
    this.checkoutOrigin = settings.checkoutOrigin;
  }

  async createCheckout(order: CheckoutOrder): Promise<Checkout> {
    const body = {
      amount: { value: valueFromMicro(order.amountMicro), currency: "RUB" },
      capture: true,
      confirmation: { type: "redirect", return_url: order.returnUrl },
      description: `gengate top-up ${order.id}`.slice(0, 128),
      metadata: { order_id: order.id, account_id: order.accountId },
    };
    const { status, json } = await this.call("POST", "/payments", body, order.id);
    const p = json as YooPayment;
    if (status !== 200 || typeof p.id !== "string" || !YOOKASSA_PAYMENT_ID.test(p.id))
      throw providerError("yookassa", describe(status, json));
    return {
      ref: p.id,
      url: checkCheckoutUrl("yookassa", p.confirmation?.confirmation_url, this.checkoutOrigin),
    };
  }

  /**
   * What YooKassa's API says about the payment a notification names. An unknown payment (404) is a
   * forged notification; a failed or slow API is a provider error (the notification is then
   * answered 502 and YooKassa sends it again later).
   */
  async verify(paymentId: string, event: string): Promise<PaymentFacts> {
    const { status, json } = await this.call("GET", `/payments/${encodeURIComponent(paymentId)}`);
    if (status === 404) throw new UnverifiedNotification("forged", "YooKassa has no such payment", paymentId);
    const p = json as YooPayment;
    if (status !== 200 || typeof p.id !== "string") throw providerError("yookassa", describe(status, json));
    if (p.id !== paymentId)
      throw new UnverifiedNotification("forged", "the API answered another payment", paymentId);
    const metadata = p.metadata ?? {};
    const str = (v: unknown) => (typeof v === "string" ? v : null);
    return {
      provider: "yookassa",
      eventId: `${paymentId}:${event}`.slice(0, 120),
      eventType: event,
      // The API's status decides whether it is paid, whatever event the notification claimed.
      creditEvent: p.status === "succeeded" || event === "payment.succeeded",
      closes: p.status === "canceled" ? "canceled" : null,
      ref: p.id,
      paid: p.status === "succeeded" && p.paid === true,
      amountMinor: minorFromValue(p.amount?.value),
      currency: typeof p.amount?.currency === "string" ? p.amount.currency.toLowerCase() : null,
      orderIds: [str(metadata.order_id)],
      accountId: str(metadata.account_id),
    };
  }

  private async call(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    idempotenceKey?: string,
  ): Promise<{ status: number; json: unknown }> {
    const auth = Buffer.from(`${this.settings.shopId}:${this.settings.secretKey}`).toString("base64");
    const headers: Record<string, string> = { authorization: `Basic ${auth}`, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (idempotenceKey) headers["idempotence-key"] = idempotenceKey;
    let res: Response;
    try {
      res = await fetch(`${this.settings.apiBase}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: "manual",
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
    } catch (err) {
      const name = (err as Error)?.name;
      throw providerError("yookassa", name === "TimeoutError" ? "timed out" : "connection failed");
    }
    let json: unknown = null;
    try {
      const bytes = await readAllCapped(res.body, ANSWER_MAX, () => new Error("too large"));
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      if (res.status === 404) return { status: 404, json: null };
      throw providerError("yookassa", `HTTP ${res.status} with an unreadable body`);
    }
    return { status: res.status, json };
  }
}

function describe(status: number, json: unknown): string {
  const e = (json ?? {}) as { code?: unknown; description?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  const text = typeof e.description === "string" ? e.description : "";
  return `HTTP ${status}${code ? ` ${code}` : ""}${text ? `: ${text}` : ""}`;
}
