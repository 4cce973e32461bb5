import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DeliveryError, postPinned } from "../../src/webhooks/deliver.ts";
import { checkWebhookUrl } from "../../src/webhooks/url-policy.ts";
import { fakeResolver, LOOPBACK_ALLOWED, NOTHING_ALLOWED, never, ok, receiver } from "./helpers.ts";

const rx = receiver((path) => {
  if (path === "/redirect") return new Response(null, { status: 302, headers: { location: "/target" } });
  if (path === "/big") return new Response("x".repeat(1_000_000));
  if (path === "/hang") return never();
  if (path === "/gone") return ok(410);
  if (path === "/error") return ok(500);
  return ok(200);
});
afterAll(() => rx.stop());

const body = JSON.stringify({ hello: "world" });
const headers = { "webhook-id": "msg_1", "webhook-timestamp": "1", "webhook-signature": "v1,x" };

async function deliveryError(p: Promise<unknown>): Promise<DeliveryError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DeliveryError);
    return err as DeliveryError;
  }
  throw new Error("expected a DeliveryError");
}

describe("postPinned (happy)", () => {
  test("POSTs the body with the given headers, JSON content type and the URL's Host", async () => {
    const before = rx.count("/hook");
    const res = await postPinned(new URL(`${rx.url("/hook")}?a=1`), body, headers, {
      policy: LOOPBACK_ALLOWED,
    });
    expect(res).toEqual({ status: 200, address: "127.0.0.1" });
    expect(rx.count("/hook")).toBe(before + 1);
    const hit = rx.hits.at(-1)!;
    expect(hit.method).toBe("POST");
    expect(hit.body).toBe(body);
    expect(hit.headers.get("content-type")).toBe("application/json");
    expect(hit.headers.get("host")).toBe(`127.0.0.1:${rx.port}`);
    expect(hit.headers.get("webhook-id")).toBe("msg_1");
    expect(hit.headers.get("webhook-signature")).toBe("v1,x");
  });

  test("non-2xx answers are returned as statuses, not errors", async () => {
    const policy = LOOPBACK_ALLOWED;
    expect((await postPinned(new URL(rx.url("/gone")), body, headers, { policy })).status).toBe(410);
    expect((await postPinned(new URL(rx.url("/error")), body, headers, { policy })).status).toBe(500);
  });

  test("a large answer body is not read to the end", async () => {
    const res = await postPinned(new URL(rx.url("/big")), body, headers, { policy: LOOPBACK_ALLOWED });
    expect(res.status).toBe(200);
  });
});

describe("postPinned (security)", () => {
  test("a redirect is not followed: 302 is the answer and the target gets no hit", async () => {
    const res = await postPinned(new URL(rx.url("/redirect")), body, headers, { policy: LOOPBACK_ALLOWED });
    expect(res.status).toBe(302);
    expect(rx.count("/redirect")).toBeGreaterThan(0);
    expect(rx.count("/target")).toBe(0);
  });

  test("without the allow-list 127.0.0.1 is refused at delivery and no connection is made", async () => {
    const before = rx.hits.length;
    const e = await deliveryError(
      postPinned(new URL(rx.url("/hook")), body, headers, { policy: NOTHING_ALLOWED }),
    );
    expect(e.kind).toBe("refused");
    expect(e.message).toMatch(/refused: .*127\.0\.0\.1.*loopback/);
    expect(rx.hits.length).toBe(before);
  });

  test("pinning: the connection goes to the address the check resolved, with the URL's Host", async () => {
    // "hooks.test" exists in no real DNS (.test is reserved): reaching the receiver proves the
    // socket used the checked address from our resolver, not a fresh lookup of its own.
    const dns = fakeResolver({ "hooks.test": ["127.0.0.1"] });
    const before = rx.count("/pinned");
    const res = await postPinned(new URL(`http://hooks.test:${rx.port}/pinned`), body, headers, {
      policy: LOOPBACK_ALLOWED,
      resolve: dns,
    });
    expect(res).toEqual({ status: 200, address: "127.0.0.1" });
    expect(rx.count("/pinned")).toBe(before + 1);
    expect(rx.hits.at(-1)!.headers.get("host")).toBe(`hooks.test:${rx.port}`);
    expect(dns.calls["hooks.test"]).toBe(1);
  });

  test("DNS rebinding: a host public at submit and private at delivery is refused, no connection", async () => {
    let answer = ["93.184.216.34"];
    const rebinding = async () => answer;
    const url = await checkWebhookUrl(`http://rebind.test:${rx.port}/hook`, NOTHING_ALLOWED, rebinding);
    // Accepted at submit; by delivery time the name points at loopback.
    answer = ["127.0.0.1"];
    const before = rx.hits.length;
    const e = await deliveryError(
      postPinned(url, body, headers, {
        policy: NOTHING_ALLOWED,
        resolve: rebinding,
      }),
    );
    expect(e.kind).toBe("refused");
    expect(rx.hits.length).toBe(before);
  });

  test("a host with a private address among public ones is refused at delivery", async () => {
    const dns = fakeResolver({ "mixed.test": ["93.184.216.34", "127.0.0.1"] });
    const before = rx.hits.length;
    const e = await deliveryError(
      postPinned(new URL(`http://mixed.test:${rx.port}/hook`), body, headers, {
        policy: NOTHING_ALLOWED,
        resolve: dns,
      }),
    );
    expect(e.kind).toBe("refused");
    expect(rx.hits.length).toBe(before);
  });
});

describe("postPinned (errors)", () => {
  test("a receiver that never answers times out", async () => {
    const e = await deliveryError(
      postPinned(new URL(rx.url("/hang")), body, headers, { policy: LOOPBACK_ALLOWED, timeoutMs: 150 }),
    );
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/no answer within 150 ms/);
  });

  test("a resolver that hangs is covered by the same timeout", async () => {
    const e = await deliveryError(
      postPinned(new URL("http://slow.test/"), body, headers, {
        policy: LOOPBACK_ALLOWED,
        timeoutMs: 100,
        resolve: () => new Promise<string[]>(() => {}),
      }),
    );
    expect(e.kind).toBe("timeout");
  });

  test("a refused connection is a network error naming the host", async () => {
    const closed = receiver();
    const port = closed.port;
    closed.stop();
    const e = await deliveryError(
      postPinned(new URL(`http://127.0.0.1:${port}/x`), body, headers, { policy: LOOPBACK_ALLOWED }),
    );
    expect(e.kind).toBe("network");
    expect(e.message).toMatch(/ECONNREFUSED/);
    expect(e.message).toContain(`connection to 127.0.0.1:${port} failed`);
  });

  test("the resolved address of a named host does not appear in the error (it reaches the client)", async () => {
    const closed = receiver();
    const port = closed.port;
    closed.stop();
    const dns = fakeResolver({ "nas.test": ["127.0.0.1"] });
    const e = await deliveryError(
      postPinned(new URL(`http://nas.test:${port}/x`), body, headers, {
        policy: LOOPBACK_ALLOWED,
        resolve: dns,
      }),
    );
    expect(e.kind).toBe("network");
    expect(e.message).toContain(`connection to nas.test:${port} failed`);
    expect(e.message).not.toContain("127.0.0.1");
  });

  test("an unresolvable host is refused", async () => {
    const e = await deliveryError(
      postPinned(new URL("http://nx.test/"), body, headers, {
        policy: LOOPBACK_ALLOWED,
        resolve: fakeResolver({}),
      }),
    );
    expect(e.kind).toBe("refused");
    expect(e.message).toMatch(/could not be resolved/);
  });
});

describe("postPinned over https", () => {
  const dir = join(import.meta.dir, "fixtures");
  const cert = readFileSync(join(dir, "hooks.test.crt"), "utf8");
  const tls = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key: readFileSync(join(dir, "hooks.test.key"), "utf8") },
    fetch: (req) => new Response(`host=${req.headers.get("host")}`, { status: 202 }),
  });
  afterAll(() => tls.stop(true));
  const dns = fakeResolver({ "hooks.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });

  test("pinned to the checked address, certificate checked against the URL's host name", async () => {
    const res = await postPinned(new URL(`https://hooks.test:${tls.port}/h`), body, headers, {
      policy: LOOPBACK_ALLOWED,
      resolve: dns,
      ca: cert,
    });
    expect(res.status).toBe(202);
  });

  test("a certificate for another name is refused (TLS server name = URL host, not the address)", async () => {
    const e = await deliveryError(
      postPinned(new URL(`https://other.test:${tls.port}/h`), body, headers, {
        policy: LOOPBACK_ALLOWED,
        resolve: dns,
        ca: cert,
      }),
    );
    expect(e.kind).toBe("network");
    expect(e.message).toMatch(/other\.test/);
  });

  test("an untrusted certificate is refused", async () => {
    const e = await deliveryError(
      postPinned(new URL(`https://hooks.test:${tls.port}/h`), body, headers, {
        policy: LOOPBACK_ALLOWED,
        resolve: dns,
      }),
    );
    expect(e.kind).toBe("network");
  });
});
