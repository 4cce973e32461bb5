import { describe, expect, test } from "bun:test";
import { buildRequestUrls, falAppId, trustedUrl } from "../../../src/providers/fal/endpoint.ts";
import { mapFalResult } from "../../../src/providers/fal/outputs.ts";
import { ProviderError } from "../../../src/providers/types.ts";
import { model } from "./helpers.ts";

describe("fal endpoint paths", () => {
  test("owner/alias are the first two segments; namespaces keep three", () => {
    expect(falAppId("fal-ai/flux/dev")).toBe("fal-ai/flux");
    expect(falAppId("fal-ai/flux-pro/v1.1-ultra/redux")).toBe("fal-ai/flux-pro");
    expect(falAppId("fal-ai/esrgan")).toBe("fal-ai/esrgan");
    expect(falAppId("workflows/acme/flow")).toBe("workflows/acme/flow");
    expect(falAppId("comfy/acme/flow/extra")).toBe("comfy/acme/flow");
    expect(() => falAppId("single")).toThrow(ProviderError);
    expect(() => falAppId("a/../b")).toThrow(ProviderError);
    expect(() => falAppId("a/%2e/b")).toThrow(ProviderError);
  });

  test("request URLs", () => {
    expect(buildRequestUrls("https://queue.fal.run", "fal-ai/flux/dev", "abc")).toEqual({
      id: "abc",
      statusUrl: "https://queue.fal.run/fal-ai/flux/requests/abc/status",
      resultUrl: "https://queue.fal.run/fal-ai/flux/requests/abc",
      cancelUrl: "https://queue.fal.run/fal-ai/flux/requests/abc/cancel",
    });
  });

  test("reply URLs are trusted only under the base URL", () => {
    const base = "https://proxy.lan/fal";
    expect(trustedUrl(base, "https://proxy.lan/fal/x/y/requests/1/status")).toBe(
      "https://proxy.lan/fal/x/y/requests/1/status",
    );
    expect(trustedUrl(base, "https://queue.fal.run/x/y/requests/1/status")).toBeNull();
    expect(trustedUrl(base, "https://proxy.lan/other/x")).toBeNull();
    expect(trustedUrl(base, "https://user:pw@proxy.lan/fal/x")).toBeNull();
    expect(trustedUrl(base, 42)).toBeNull();
    expect(trustedUrl(base, "not a url")).toBeNull();
  });
});

describe("mapFalResult", () => {
  test("extra keeps plain fields and drops other files (they would bypass the store)", () => {
    const r = mapFalResult(model("a/b"), {
      images: [{ url: "https://x/1.png" }],
      seed: 1,
      mask: { url: "https://x/mask.png" },
      frames: [{ url: "https://x/f.png" }],
      nsfw: [true],
    });
    expect(r.extra).toEqual({ seed: 1, nsfw: [true] });
  });

  test("a zero or negative duration is ignored (it would make the job free)", () => {
    const r = mapFalResult(model("a/b", "video"), {
      video: { url: "https://x/v.mp4", duration: 0 },
      duration: -1,
    });
    expect(r.actualUnits).toBeUndefined();
    expect(r.outputs[0]!.duration).toBeUndefined();
  });

  test("non-http URLs are refused", () => {
    expect(() => mapFalResult(model("a/b"), { images: [{ url: "file:///etc/passwd" }] })).toThrow(
      "unsupported URL scheme",
    );
  });

  test("an empty images list and a non-object body are failures, not crashes", () => {
    expect(() => mapFalResult(model("a/b"), { images: [] })).toThrow(ProviderError);
    expect(() => mapFalResult(model("a/b"), [1, 2])).toThrow("not a JSON object");
    expect(() => mapFalResult(model("a/b"), null)).toThrow("not a JSON object");
  });

  test("megapixel image models report no actualUnits (priced from size)", () => {
    const m = model("a/b", "image", { unit: "megapixel" });
    expect(mapFalResult(m, { images: [{ url: "https://x/1.png" }] }).actualUnits).toBeUndefined();
  });
});
