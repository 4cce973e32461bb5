import { afterAll, describe, expect, test } from "bun:test";
import { LinkSigner } from "../../../src/files/signing.ts";
import { COG_WEBHOOK_MAX } from "../../../src/providers/cog-webhook-http.ts";
import { pollUntil } from "../../helpers/api.ts";
import { finalJob, submitQueued } from "../../helpers/context.ts";
import { cogGateway } from "./helpers.ts";

const g = await cogGateway();
afterAll(async () => await g.stop());

/** A webhook POSTed to the gateway's route for (provider, job) with `token` (as given, or none). */
async function post(
  provider: string,
  jobId: string,
  token: string | null,
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
) {
  const q = token === null ? "" : `?token=${encodeURIComponent(token)}`;
  return await g.t.app.handle(
    new Request(`http://localhost/providers/cog/${provider}/${jobId}${q}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    }),
  );
}
const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;
const succeeded = (id: string) =>
  JSON.stringify({ id, status: "succeeded", output: "https://evil.example/x.png" });

describe("cog webhook security", () => {
  test("forged webhooks are refused before their body is read and change nothing", async () => {
    g.cog.hold();
    const id = await submitQueued(g.t, "box/img", { prompt: "guarded" });
    const other = await submitQueued(g.t, "box/img", { prompt: "another job" });
    await pollUntil(
      async () => (await g.t.ctx.jobs.get(id))!.upstream_id,
      (u) => u === id,
    );
    const good = tokenOf(g.t.ctx.cogWebhooks.url("box", id));

    expect((await post("box", id, null, succeeded(id))).status).toBe(403); // no token
    expect((await post("box", id, "A".repeat(43), succeeded(id))).status).toBe(403); // a made-up one
    expect((await post("box", id, `${good.slice(0, -2)}AA`, succeeded(id))).status).toBe(403); // altered
    // Another job's valid token, replayed on this job's URL; this job's token on another provider name.
    expect(
      (await post("box", id, tokenOf(g.t.ctx.cogWebhooks.url("box", other)), succeeded(id))).status,
    ).toBe(403);
    expect((await post("other", id, good, succeeded(id))).status).toBe(403);
    // A link signature is no token: same secret, another derived key.
    expect((await post("box", id, g.t.ctx.signer.sign(id, 0, 0), succeeded(id))).status).toBe(403);
    // Over the cap: refused from the declared length, and from a stream without one.
    const big = await post("box", id, good, "{}", { "content-length": String(COG_WEBHOOK_MAX + 1) });
    expect(big.status).toBe(413);
    let sent = 0;
    const chunk = new Uint8Array(4 * 1024 * 1024).fill(0x20);
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > COG_WEBHOOK_MAX + chunk.length) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    expect((await post("box", id, null, stream)).status).toBe(403); // no token: not one byte read...
    expect(sent).toBeLessThanOrEqual(chunk.length * 2);
    const stream2 = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > 3 * COG_WEBHOOK_MAX) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    expect((await post("box", id, good, stream2)).status).toBe(413);
    // A valid token with a body that is not this job's prediction: 400 (cog does not retry it).
    expect((await post("box", id, good, JSON.stringify({ id: other, status: "succeeded" }))).status).toBe(
      400,
    );
    expect((await post("box", id, good, "[1,2]")).status).toBe(400);
    expect((await post("box", id, good, "not json")).status).toBe(400);

    expect(await g.recorded(id)).toBeNull();
    expect(await g.recorded(other)).toBeNull();
    expect((await g.t.ctx.jobs.get(id))!.status).toBe("IN_PROGRESS");

    g.cog.release();
    const job = await finalJob(g.t.ctx, id);
    expect(job.status).toBe("COMPLETED");
    expect(await g.money(id)).toEqual({ status: "settled", charged: 3000n, chargeEntries: 1 });
    expect((await finalJob(g.t.ctx, other)).status).toBe("COMPLETED");
  });

  test("a replayed or later final webhook changes nothing: the first recorded answer stays", async () => {
    const id = await submitQueued(g.t, "box/img", { prompt: "once" });
    expect((await finalJob(g.t.ctx, id)).status).toBe("COMPLETED");
    const first = (await g.recorded(id))!.payload;
    const good = tokenOf(g.t.ctx.cogWebhooks.url("box", id));
    const late = await post("box", id, good, JSON.stringify({ id, status: "failed", error: "late" }));
    expect(late.status).toBe(200);
    expect((await g.recorded(id))!.payload).toBe(first);
    expect((await g.t.ctx.jobs.get(id))!.status).toBe("COMPLETED");
    expect(await g.money(id)).toEqual({ status: "settled", charged: 3000n, chargeEntries: 1 });
  });

  test("the webhook URL names no secret: its token is an HMAC of the provider and the job only", () => {
    const url = g.t.ctx.cogWebhooks.url("box", "01a21e28-0000-7000-8000-000000000001");
    expect(url).toMatch(
      /^http:\/\/gengate\.test\/providers\/cog\/box\/01a21e28-0000-7000-8000-000000000001\?token=[A-Za-z0-9_-]{43}$/,
    );
    expect(g.t.ctx.cogWebhooks.url("box", "01a21e28-0000-7000-8000-000000000001")).toBe(url); // stable across restarts
  });
  test("tokens follow the link secret's rotation: the previous secret verifies, a dropped one does not", () => {
    const before = new LinkSigner(["secret-one"]);
    const token = before.signFor("cog webhook", "box\njob");
    expect(new LinkSigner(["secret-two", "secret-one"]).verifyFor("cog webhook", "box\njob", token)).toBe(
      true,
    );
    expect(new LinkSigner(["secret-two"]).verifyFor("cog webhook", "box\njob", token)).toBe(false);
    // Another purpose or text under the same secret is another token.
    expect(before.verifyFor("other purpose", "box\njob", token)).toBe(false);
    expect(before.verifyFor("cog webhook", "box\nother", token)).toBe(false);
  });
});
