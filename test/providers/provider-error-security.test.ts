import { describe, expect, test } from "bun:test";
import { DETAIL_MAX_CHARS, logProviderFailure, ProviderError } from "../../src/providers/types.ts";
import { logLines } from "../helpers/context.ts";

// ProviderError keeps what an upstream said out of its message: the detail holds it, redacted of the
// provider's key and bounded, for the server's log only.

const KEY = "sk-provider-SECRET-0123456789abcdef";

describe("ProviderError.detail", () => {
  test("the key is cut out before the detail is bounded: no prefix of it survives the cut", async () => {
    // The key starts 10 characters before the bound: bounded first, its first 9 characters would stay.
    const detail = `${"x".repeat(DETAIL_MAX_CHARS - 10)}${KEY} and more`;
    const err = new ProviderError("failed", "The upstream failed the call.", { detail, secret: KEY });
    expect(err.detail!.length).toBe(DETAIL_MAX_CHARS);
    expect(err.detail).not.toContain(KEY.slice(0, 5));
    expect(err.detail).toEndWith("[redacted…");
    expect(err.message).toBe("The upstream failed the call.");
  });

  test("an empty or blank detail is none", () => {
    expect(new ProviderError("failed", "x", { detail: "  \n" }).detail).toBeUndefined();
    expect(new ProviderError("failed", "x", { detail: null }).detail).toBeUndefined();
  });

  test("restated keeps the status and the detail under a new message and kind", () => {
    const err = new ProviderError("input", "The upstream refused the call.", {
      status: 422,
      detail: "bad field",
    });
    const again = err.restated("failed", "fal lost track of request r1.");
    expect(again).toMatchObject({ kind: "failed", message: "fal lost track of request r1.", status: 422 });
    expect(again.detail).toBe("bad field");
  });
});

describe("logProviderFailure", () => {
  test("logs the status and the detail under the request id", () => {
    const err = new ProviderError("input", "The upstream refused the call.", {
      status: 418,
      detail: "teapot",
    });
    logProviderFailure(err, "req-log-1", "oa");
    const line = logLines.map((l) => JSON.parse(l)).find((l) => l.request_id === "req-log-1");
    expect(line).toMatchObject({
      level: "warn",
      msg: "upstream error",
      provider: "oa",
      kind: "input",
      status: 418,
      detail: "teapot",
    });
  });

  test("an error of ours alone (no status, no detail) logs nothing", () => {
    logProviderFailure(new ProviderError("failed", "The sandbox was asked to fail."), "req-log-2", "sandbox");
    expect(logLines.some((l) => l.includes("req-log-2"))).toBe(false);
  });
});
