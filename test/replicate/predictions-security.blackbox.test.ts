/**
 * The Replicate door reads and cancels only the key's account's jobs: another account's prediction
 * is 404 like an unknown one (src/queue/ownership.ts ownedJob), never canceled or listed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Replicate from "replicate";
import { startFunded } from "../helpers/api.ts";

let s: Awaited<ReturnType<typeof startFunded>>;
let mine: Replicate;
let theirs: Replicate;
let otherKey = "";
beforeAll(async () => {
  s = await startFunded("[queue]\nconcurrency = { sandbox = 1 }\n");
  const other = await fetch(`${s.url}/admin/v1/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "other", credit: "5" }),
  });
  otherKey = ((await other.json()) as { key: string }).key;
  mine = new Replicate({ auth: s.defaultKey!, baseUrl: `${s.url}/v1` });
  theirs = new Replicate({ auth: otherKey, baseUrl: `${s.url}/v1` });
});
afterAll(() => s.cleanup());

const statusOf = async (call: Promise<unknown>) => {
  try {
    await call;
    return 200;
  } catch (e) {
    return (e as { response: Response }).response.status;
  }
};

describe("replicate door security", () => {
  test("another account's prediction is 404 to get and cancel, and absent from its list", async () => {
    const slow = (await mine.predictions.create({
      model: "sandbox/image",
      input: { prompt: "slow", sandbox: { delay_ms: 600 } },
    })) as { id: string };
    const queued = (await mine.predictions.create({ model: "sandbox/image", input: { prompt: "q" } })) as {
      id: string;
    };
    expect(await statusOf(theirs.predictions.get(queued.id))).toBe(404);
    expect(await statusOf(theirs.predictions.cancel(queued.id))).toBe(404);
    const list = (await theirs.predictions.list()) as { results: { id: string }[] };
    expect(list.results.map((p) => p.id)).not.toContain(queued.id);
    // Still queued and still the owner's: the other account's cancel changed nothing.
    const own = (await mine.predictions.get(queued.id)) as { status: string };
    expect(["starting", "processing", "succeeded"]).toContain(own.status);
    await mine.wait(queued as never, { interval: 50 });
    await mine.wait(slow as never, { interval: 50 });
  });

  test("no key or a wrong key is 401 in the problem shape; two different keys are 401", async () => {
    const none = await fetch(`${s.url}/v1/predictions`);
    expect(none.status).toBe(401);
    expect(none.headers.get("content-type")).toBe("application/problem+json");
    expect(((await none.json()) as { code: string }).code).toBe("unauthorized");
    expect(
      await statusOf(new Replicate({ auth: "gk_wrong", baseUrl: `${s.url}/v1` }).predictions.list()),
    ).toBe(401);
    const two = await fetch(`${s.url}/v1/predictions`, {
      headers: { authorization: `Token ${s.defaultKey}`, "x-api-key": otherKey },
    });
    expect(two.status).toBe(401);
    const token = await fetch(`${s.url}/v1/predictions`, {
      headers: { authorization: `Token ${s.defaultKey}` },
    });
    expect(token.status).toBe(200);
  });

  test("the webhook secret is the account's own", async () => {
    const a = (await mine.webhooks.default.secret.get()) as { key: string };
    const b = (await theirs.webhooks.default.secret.get()) as { key: string };
    expect(a.key).toMatch(/^whsec_/);
    expect(a.key).not.toBe(b.key);
    const native = (await (await s.get("/v1/account/webhook-secret")).json()) as { secret: string };
    expect(native.secret).toBe(a.key);
  });
});
