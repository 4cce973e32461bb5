import { describe, expect, spyOn, test } from "bun:test";
import * as crypto from "node:crypto";
import {
  newWebhookSecret,
  secretKey,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from "../../src/webhooks/signing.ts";

const secret = newWebhookSecret();
const id = "msg_0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b_completed";
const body = JSON.stringify({ request_id: "0193a1b2", status: "COMPLETED", note: "é ✓" });

function signed(ts = Math.floor(Date.now() / 1000), b = body, s = secret) {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(ts),
    "webhook-signature": signWebhook(s, id, ts, b),
  };
}

describe("signing (happy)", () => {
  test("secrets are whsec_ + base64 of 32 random bytes, and differ", () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(secretKey(a).length).toBe(32);
    expect(newWebhookSecret()).not.toBe(a);
  });

  test("the signature is v1, base64 HMAC-SHA256 of id.timestamp.body keyed with the decoded secret", () => {
    const ts = 1_700_000_000;
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    const expected = crypto.createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64");
    expect(signWebhook(secret, id, ts, body)).toBe(`v1,${expected}`);
  });

  test("matches the Standard Webhooks reference vector", () => {
    // From the standard-webhooks repository's test suite (libraries/javascript).
    const s = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const sig = signWebhook(s, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    expect(sig).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  test("round trip with plain headers and with a Headers object", () => {
    verifyWebhook(secret, signed(), body);
    verifyWebhook(secret, new Headers(signed()), body);
  });

  test("one valid signature among several is enough (rotation overlap)", () => {
    const ts = Math.floor(Date.now() / 1000);
    const other = newWebhookSecret();
    const h = {
      ...signed(ts),
      "webhook-signature": `${signWebhook(other, id, ts, body)} ${signWebhook(secret, id, ts, body)}`,
    };
    verifyWebhook(secret, h, body);
    verifyWebhook(other, h, body);
  });

  test("the comparison goes through crypto.timingSafeEqual", () => {
    const spy = spyOn(crypto, "timingSafeEqual");
    try {
      verifyWebhook(secret, signed(), body);
      expect(spy).toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});

describe("verifyWebhook (errors and security)", () => {
  const refused = (fn: () => void, reason: RegExp) => {
    expect(fn).toThrow(WebhookVerificationError);
    expect(fn).toThrow(reason);
  };

  test("a tampered body fails", () => {
    refused(
      () => verifyWebhook(secret, signed(), body.replace("COMPLETED", "FAILED")),
      /no matching signature/,
    );
  });

  test("a tampered id fails", () => {
    refused(
      () => verifyWebhook(secret, { ...signed(), "webhook-id": `${id}x` }, body),
      /no matching signature/,
    );
  });

  test("a tampered timestamp (still within tolerance) fails", () => {
    const ts = Math.floor(Date.now() / 1000);
    refused(
      () => verifyWebhook(secret, { ...signed(ts), "webhook-timestamp": String(ts - 1) }, body),
      /no matching signature/,
    );
  });

  test("another account's secret fails", () => {
    refused(() => verifyWebhook(newWebhookSecret(), signed(), body), /no matching signature/);
  });

  test("an old or future timestamp fails even with a valid signature", () => {
    const now = Math.floor(Date.now() / 1000);
    refused(() => verifyWebhook(secret, signed(now - 301), body), /outside the tolerance/);
    refused(() => verifyWebhook(secret, signed(now + 301), body), /outside the tolerance/);
    verifyWebhook(secret, signed(now - 299), body);
    verifyWebhook(secret, signed(now - 3600), body, 7200);
    refused(() => verifyWebhook(secret, signed(now - 3600), body, 300, now), /outside the tolerance/);
  });

  test("missing or malformed headers fail", () => {
    const { "webhook-signature": _s, ...noSig } = signed();
    refused(() => verifyWebhook(secret, noSig, body), /missing/);
    refused(() => verifyWebhook(secret, { ...signed(), "webhook-timestamp": "1e9" }, body), /unix seconds/);
    refused(() => verifyWebhook(secret, { ...signed(), "webhook-signature": "v1," }, body), /no matching/);
    refused(
      () => verifyWebhook(secret, { ...signed(), "webhook-signature": "garbage" }, body),
      /no matching/,
    );
  });

  test("a signature of another version or a truncated one fails without throwing from the comparison", () => {
    const h = signed();
    const b64 = h["webhook-signature"].slice(3);
    refused(() => verifyWebhook(secret, { ...h, "webhook-signature": `v2,${b64}` }, body), /no matching/);
    refused(
      () => verifyWebhook(secret, { ...h, "webhook-signature": `v1,${b64.slice(0, 20)}` }, body),
      /no matching/,
    );
  });

  test("a secret that is not whsec_ + base64 is refused", () => {
    expect(() => signWebhook("whsec_not base64!", id, 1, body)).toThrow(/not whsec_/);
  });
});
