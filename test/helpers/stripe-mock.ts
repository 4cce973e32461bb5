// A local stand-in for Stripe's API and hosted Checkout, a real HTTP server on 127.0.0.1:0, with just
// what gengate uses: POST /v1/checkout/sessions (form-encoded, Bearer secret key, Idempotency-Key) and
// GET /v1/checkout/sessions/:id; a hosted page GET /pay/:id whose `Pay` button (POST /pay/:id) marks
// the session paid, sends the signed checkout.session.completed webhook, then redirects to success_url.
// Webhooks are signed with Stripe's real scheme (the package's generateTestHeaderStringAsync).
import Stripe from "stripe";

export const STRIPE_SECRET_KEY = "sk_test_gengate_mock_secret_key_0123456789";
export const STRIPE_WEBHOOK_SECRET = "whsec_gengate_mock_webhook_secret_0123456789";

export interface MockSession {
  id: string;
  object: "checkout.session";
  mode: string;
  status: "open" | "complete" | "expired";
  payment_status: "unpaid" | "paid" | "no_payment_required";
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  customer_email: string | null;
  success_url: string;
  cancel_url: string;
  expires_at: number;
  url: string;
}

export interface SentEvent {
  id: string;
  body: string;
  response: Response;
}

/** Where webhooks go: an URL, or a function handling the Request (an in-process app). */
export type WebhookTarget = string | ((request: Request) => Promise<Response>);

export interface StripeMock {
  url: string;
  sessions: Map<string, MockSession>;
  /** Every API request received: method, path, headers and body text. */
  requests: { method: string; path: string; headers: Headers; body: string }[];
  /** Set before a checkout: the next create answers this status (or never answers, "hang"). */
  failNext: number | "hang" | null;
  /** Set before a checkout: the next create answers a session whose url is this. */
  urlOverride: string | null;
  target: WebhookTarget | null;
  /** Builds an event about a session (a copy with `changes` applied). */
  event(type: string, session: MockSession, changes?: Partial<MockSession>): { id: string; body: string };
  /** Signs and sends an event body; `timestamp` (epoch s) and `secret` can be forged. */
  send(
    body: string,
    options?: { timestamp?: number; secret?: string; header?: string | null },
  ): Promise<Response>;
  /** Marks a session paid and sends checkout.session.completed; returns what was sent. */
  pay(id: string): Promise<SentEvent>;
  stop(): void;
}

function rid(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
}

export async function startStripeMock(options: { now?: () => number } = {}): Promise<StripeMock> {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const sessions = new Map<string, MockSession>();
  const byKey = new Map<string, MockSession>();
  const requests: StripeMock["requests"] = [];
  const page = (s: MockSession) =>
    new Response(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Mock Stripe Checkout</title></head>
<body><main><h1>Mock Stripe Checkout</h1><p>Pay ${(s.amount_total / 100).toFixed(2)} ${s.currency.toUpperCase()}</p>
<form method="post" action="/pay/${s.id}"><button type="submit">Pay</button></form>
<p><a href="${s.cancel_url}">Back</a></p></main></body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );

  const mock: StripeMock = {
    url: "",
    sessions,
    requests,
    failNext: null,
    urlOverride: null,
    target: null,
    event(type, session, changes = {}) {
      const id = rid("evt");
      const body = JSON.stringify({
        id,
        object: "event",
        api_version: "2025-01-01",
        created: now(),
        type,
        livemode: false,
        pending_webhooks: 1,
        data: { object: { ...session, ...changes } },
      });
      return { id, body };
    },
    async send(body, o = {}) {
      const header =
        o.header !== undefined
          ? o.header
          : await Stripe.webhooks.generateTestHeaderStringAsync({
              payload: body,
              secret: o.secret ?? STRIPE_WEBHOOK_SECRET,
              timestamp: o.timestamp ?? now(),
            });
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (header !== null) headers["stripe-signature"] = header;
      const target = mock.target;
      if (!target) throw new Error("stripe mock: no webhook target");
      if (typeof target === "string") return fetch(target, { method: "POST", headers, body });
      return target(
        new Request("http://localhost/payments/stripe/webhook", { method: "POST", headers, body }),
      );
    },
    async pay(id) {
      const s = sessions.get(id);
      if (!s) throw new Error(`stripe mock: no session ${id}`);
      s.status = "complete";
      s.payment_status = "paid";
      const ev = mock.event("checkout.session.completed", s);
      const response = await mock.send(ev.body);
      return { ...ev, response };
    },
    stop: () => server.stop(true),
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      const pay = /^\/pay\/(cs_[A-Za-z0-9_]+)$/.exec(url.pathname);
      if (pay) {
        const s = sessions.get(pay[1]!);
        if (!s) return new Response("no such session", { status: 404 });
        if (req.method === "GET") return page(s);
        await mock.pay(s.id);
        return new Response(null, { status: 303, headers: { location: s.success_url } });
      }
      requests.push({ method: req.method, path: url.pathname, headers: req.headers, body });
      if (req.headers.get("authorization") !== `Bearer ${STRIPE_SECRET_KEY}`)
        return Response.json(
          { error: { type: "invalid_request_error", message: "Invalid API Key provided" } },
          { status: 401 },
        );
      if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") {
        const fail = mock.failNext;
        mock.failNext = null;
        if (fail === "hang") return new Promise<Response>(() => {});
        if (fail !== null)
          return Response.json({ error: { type: "api_error", message: "mock failure" } }, { status: fail });
        const key = req.headers.get("idempotency-key");
        const known = key ? byKey.get(key) : undefined;
        if (known) return Response.json(known);
        const f = new URLSearchParams(body);
        const id = rid("cs_test");
        const s: MockSession = {
          id,
          object: "checkout.session",
          mode: f.get("mode") ?? "",
          status: "open",
          payment_status: "unpaid",
          amount_total:
            Number(f.get("line_items[0][price_data][unit_amount]")) *
            Number(f.get("line_items[0][quantity]") ?? 1),
          currency: f.get("line_items[0][price_data][currency]") ?? "",
          client_reference_id: f.get("client_reference_id"),
          metadata: {
            order_id: f.get("metadata[order_id]") ?? "",
            account_id: f.get("metadata[account_id]") ?? "",
          },
          customer_email: f.get("customer_email"),
          success_url: f.get("success_url") ?? "",
          cancel_url: f.get("cancel_url") ?? "",
          expires_at: Number(f.get("expires_at") ?? 0),
          url: mock.urlOverride ?? `${mock.url}/pay/${id}`,
        };
        mock.urlOverride = null;
        sessions.set(id, s);
        if (key) byKey.set(key, s);
        return Response.json(s);
      }
      const get = /^\/v1\/checkout\/sessions\/([A-Za-z0-9_]+)$/.exec(url.pathname);
      if (req.method === "GET" && get) {
        const s = sessions.get(get[1]!);
        return s
          ? Response.json(s)
          : Response.json(
              { error: { type: "invalid_request_error", message: "No such session" } },
              { status: 404 },
            );
      }
      return Response.json(
        { error: { type: "invalid_request_error", message: "Unrecognized request URL" } },
        { status: 404 },
      );
    },
  });
  mock.url = `http://127.0.0.1:${server.port}`;
  return mock;
}
