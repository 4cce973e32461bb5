import { afterEach, describe, expect, test } from "bun:test";
import { ProviderError } from "../../src/providers/types.ts";
import { fetchUpstream, upstreamJson } from "../../src/providers/upstream-client.ts";
import { type IdleCloseUpstream, startIdleCloseUpstream } from "../helpers/idle-close-upstream.ts";

// fetchUpstream sends a chat call again only in the keep-alive race, and only once; a submit the
// upstream may have worked on is never sent twice by it (a synchronous image call would be generated
// and billed upstream twice).

let up: IdleCloseUpstream | null = null;
afterEach(() => up?.stop());
const ok = () => ({ contentType: "application/json", body: '{"ok":true}' });
const call = () => ({ timeoutMs: 10_000, signal: new AbortController().signal });

describe("fetchUpstream: what is not sent again", () => {
  test("a chat call to an upstream that closes every request unread: two attempts, then the error", async () => {
    up = startIdleCloseUpstream({ answer: ok, answersPerConnection: 0 });
    const err = await fetchUpstream(`${up.url}/v1/x`, { method: "POST", body: "{}" }, "idle-close").catch(
      (e) => e,
    );
    expect((err as { code?: string }).code).toBe("ECONNRESET");
    expect(up.arrivals).toBe(2);
    expect(up.processed).toBe(0);
  });

  test("a submit the upstream read and then dropped is not sent again (capacity, one arrival)", async () => {
    up = startIdleCloseUpstream({ answer: ok, closeAfterMs: 0 });
    const err = await upstreamJson(`${up.url}/v1/x`, { method: "POST", body: "{}" }, call()).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe("capacity");
    expect(up.arrivals).toBe(1);
  });

  test("a close after the upstream read the request and worked on it (1.2 s) is not sent again", async () => {
    up = startIdleCloseUpstream({ answer: ok, closeAfterMs: 1200 });
    const err = await fetchUpstream(`${up.url}/v1/x`, { method: "POST", body: "{}" }, "idle-close").catch(
      (e) => e,
    );
    expect((err as { code?: string }).code).toBe("ECONNRESET");
    expect(up.arrivals).toBe(1);
  });
});
