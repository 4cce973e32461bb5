// A local stand-in for YooKassa's API v3 and its payment page, a real HTTP server on 127.0.0.1:0:
// POST /v3/payments (Basic shopId:secretKey, Idempotence-Key required; the same key gives the same
// payment), GET /v3/payments/:id (404 for an unknown one); a payment page GET /pay/:id whose `Pay`
// button (POST /pay/:id) marks the payment succeeded, sends the (unsigned) notification, then
// redirects to return_url. Tests change what the API says with `set` and send notifications with
// `notify`.
import type { WebhookTarget } from "./stripe-mock.ts";

export const YOOKASSA_SHOP_ID = "123456";
export const YOOKASSA_SECRET_KEY = "test_gengate_mock_yookassa_secret";

export interface MockPayment {
  id: string;
  status: "pending" | "waiting_for_capture" | "succeeded" | "canceled";
  paid: boolean;
  amount: { value: string; currency: string };
  description: string;
  metadata: Record<string, string>;
  confirmation: { type: "redirect"; confirmation_url: string; return_url: string };
  created_at: string;
  test: boolean;
  refundable: boolean;
}

export interface YooKassaMock {
  url: string;
  /** api_base for the config: `${url}/v3`. */
  apiBase: string;
  payments: Map<string, MockPayment>;
  requests: { method: string; path: string; headers: Headers; body: string }[];
  /** The next API call (create or get) answers this status, or never answers ("hang"). */
  failNext: number | "hang" | null;
  target: WebhookTarget | null;
  /**
   * GET /v3/payments/<key> answers the payment named by the value instead: an API (or a proxy or
   * cache in front of it) that answers with another payment than the one asked for.
   */
  answerAs: Map<string, string>;
  /** Changes what the API says about a payment. */
  set(id: string, changes: Partial<MockPayment>): void;
  /** Sends a notification for a payment (the body claims what `object` says, default the payment). */
  notify(id: string, event?: string, object?: Record<string, unknown>): Promise<Response>;
  /** Marks a payment succeeded and notifies. */
  pay(id: string): Promise<Response>;
  stop(): void;
}

export async function startYooKassaMock(): Promise<YooKassaMock> {
  const payments = new Map<string, MockPayment>();
  const byKey = new Map<string, MockPayment>();
  const requests: YooKassaMock["requests"] = [];
  const auth = `Basic ${Buffer.from(`${YOOKASSA_SHOP_ID}:${YOOKASSA_SECRET_KEY}`).toString("base64")}`;
  const error = (status: number, code: string, description: string) =>
    Response.json({ type: "error", id: crypto.randomUUID(), code, description }, { status });

  const mock: YooKassaMock = {
    url: "",
    apiBase: "",
    payments,
    requests,
    failNext: null,
    target: null,
    answerAs: new Map(),
    set(id, changes) {
      const p = payments.get(id);
      if (!p) throw new Error(`yookassa mock: no payment ${id}`);
      Object.assign(p, changes);
    },
    async notify(id, event = "payment.succeeded", object) {
      const body = JSON.stringify({
        type: "notification",
        event,
        object: object ?? payments.get(id) ?? { id },
      });
      const headers = { "content-type": "application/json" };
      const target = mock.target;
      if (!target) throw new Error("yookassa mock: no notification target");
      if (typeof target === "string") return fetch(target, { method: "POST", headers, body });
      return target(
        new Request("http://localhost/payments/yookassa/webhook", { method: "POST", headers, body }),
      );
    },
    async pay(id) {
      mock.set(id, { status: "succeeded", paid: true });
      return mock.notify(id);
    },
    stop: () => server.stop(true),
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      const pay = /^\/pay\/([0-9a-f-]+)$/.exec(url.pathname);
      if (pay) {
        const p = payments.get(pay[1]!);
        if (!p) return new Response("no such payment", { status: 404 });
        if (req.method === "GET")
          return new Response(
            `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Mock YooKassa</title></head><body><main>
<h1>Mock YooKassa</h1><p>Pay ${p.amount.value} ${p.amount.currency}</p>
<form method="post" action="/pay/${p.id}"><button type="submit">Pay</button></form></main></body></html>`,
            { headers: { "content-type": "text/html; charset=utf-8" } },
          );
        await mock.pay(p.id);
        return new Response(null, { status: 303, headers: { location: p.confirmation.return_url } });
      }
      requests.push({ method: req.method, path: url.pathname, headers: req.headers, body });
      if (req.headers.get("authorization") !== auth)
        return error(401, "invalid_credentials", "Authentication failed");
      const fail = mock.failNext;
      mock.failNext = null;
      if (fail === "hang") return new Promise<Response>(() => {});
      if (fail !== null) return error(fail, "internal_server_error", "mock failure");
      if (req.method === "POST" && url.pathname === "/v3/payments") {
        const key = req.headers.get("idempotence-key");
        if (!key) return error(400, "invalid_request", "Idempotence-Key is required");
        const known = byKey.get(key);
        if (known) return Response.json(known);
        const b = JSON.parse(body) as {
          amount: { value: string; currency: string };
          description?: string;
          metadata?: Record<string, string>;
          confirmation: { type: string; return_url: string };
          capture?: boolean;
        };
        if (b.confirmation?.type !== "redirect" || b.capture !== true)
          return error(400, "invalid_request", "mock takes redirect + capture only");
        const id = crypto.randomUUID();
        const p: MockPayment = {
          id,
          status: "pending",
          paid: false,
          amount: b.amount,
          description: b.description ?? "",
          metadata: b.metadata ?? {},
          confirmation: {
            type: "redirect",
            confirmation_url: `${mock.url}/pay/${id}`,
            return_url: b.confirmation.return_url,
          },
          created_at: new Date().toISOString(),
          test: true,
          refundable: false,
        };
        payments.set(id, p);
        byKey.set(key, p);
        return Response.json(p);
      }
      const get = /^\/v3\/payments\/([^/]+)$/.exec(url.pathname);
      if (req.method === "GET" && get) {
        const asked = decodeURIComponent(get[1]!);
        const p = payments.get(mock.answerAs.get(asked) ?? asked);
        return p ? Response.json(p) : error(404, "not_found", "Payment not found");
      }
      return error(404, "not_found", "Unknown route");
    },
  });
  mock.url = `http://127.0.0.1:${server.port}`;
  mock.apiBase = `${mock.url}/v3`;
  return mock;
}
