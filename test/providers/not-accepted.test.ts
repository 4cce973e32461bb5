import { afterAll, describe, expect, test } from "bun:test";
import { submitToFal } from "../../src/providers/fal/submit.ts";
import { ProviderError } from "../../src/providers/types.ts";
import { upstreamJson } from "../../src/providers/upstream-client.ts";
import { startIdleCloseUpstream } from "../helpers/idle-close-upstream.ts";
import { freePort } from "../helpers/server.ts";

/**
 * `ProviderError.notAccepted`: set only when the upstream certainly did not take the request, the
 * one case a model's next route may be tried (docs/providers.md "Fallback, never a double run").
 */
const statuses = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (req) => {
    const status = Number(new URL(req.url).pathname.slice(1));
    return Response.json({ error: { message: "no" } }, { status });
  },
});
const slow = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: async () => {
    await Bun.sleep(2000);
    return Response.json({});
  },
});
afterAll(() => {
  statuses.stop(true);
  slow.stop(true);
});
const call = (timeoutMs = 5000) => ({ timeoutMs, signal: new AbortController().signal });
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
};
const post = { method: "POST", body: "{}" };

describe("upstreamJson: which failures certainly created nothing", () => {
  test("a refused connection (nothing sent): notAccepted", async () => {
    const err = await failure(upstreamJson(`http://127.0.0.1:${freePort()}/x`, post, call()));
    expect([err.kind, err.notAccepted]).toEqual(["capacity", true]);
  });

  test("429, 502, 503, 504 and 500 answers: notAccepted (the upstream answered: it refused)", async () => {
    for (const status of [429, 500, 502, 503, 504]) {
      const err = await failure(upstreamJson(`${statuses.url}${status}`, post, call()));
      expect([status, err.notAccepted]).toEqual([status, true]);
    }
  });

  test("a refused input (4xx) is an answer about the input, never a reason to try elsewhere", async () => {
    const err = await failure(upstreamJson(`${statuses.url}422`, post, call()));
    expect([err.kind, err.notAccepted]).toEqual(["input", false]);
  });

  test("a timeout, or a connection dropped after sending: the upstream may have it, never notAccepted", async () => {
    const timedOut = await failure(upstreamJson(slow.url.href, post, call(200)));
    expect(timedOut.notAccepted).toBe(false);
    const up = startIdleCloseUpstream({
      answer: () => ({ contentType: "application/json", body: "{}" }),
      closeAfterMs: 0,
    });
    try {
      const dropped = await failure(upstreamJson(`${up.url}/x`, post, call()));
      expect(dropped.notAccepted).toBe(false);
    } finally {
      up.stop();
    }
  });

  test("restating a failure keeps notAccepted", async () => {
    const err = await failure(upstreamJson(`${statuses.url}503`, post, call()));
    expect(err.restated("capacity", "The cog server is unavailable.").notAccepted).toBe(true);
  });
});

describe("fal's submit", () => {
  const submit = (url: string, timeoutMs = 5000) =>
    submitToFal({
      url,
      body: {},
      headers: {},
      timeoutMs,
      signal: new AbortController().signal,
      secret: null,
    });

  test("refused connection, 429, 503, 500: notAccepted; a proxy's 502/504, a timeout: not", async () => {
    expect((await failure(submit(`http://127.0.0.1:${freePort()}/m`))).notAccepted).toBe(true);
    for (const status of [429, 503, 500])
      expect([status, (await failure(submit(`${statuses.url}${status}`))).notAccepted]).toEqual([
        status,
        true,
      ]);
    for (const status of [502, 504])
      expect([status, (await failure(submit(`${statuses.url}${status}`))).notAccepted]).toEqual([
        status,
        false,
      ]);
    expect((await failure(submit(slow.url.href, 200))).notAccepted).toBe(false);
  });
});
