import { afterAll, describe, expect, test } from "bun:test";
import { mockImageModel, openaiMediaHarness } from "./helpers.ts";

// An image link in an upstream's answer is fetched only under the outbound policy: the upstream's
// own origin, or a host whose every address is public. Anything else fails the job (hold released)
// and is never fetched, so an upstream cannot make the gateway read the operator's network.

const { h, stop } = await openaiMediaHarness(
  ["link-metadata", "link-localhost"].map((n) => mockImageModel(n)),
);
afterAll(stop);

describe("openai image links: the outbound policy", () => {
  for (const [name, what] of [
    ["link-metadata", "the cloud metadata address"],
    ["link-localhost", "another origin on loopback"],
  ] as const) {
    test(`a link to ${what}: failed, nothing fetched or stored, nothing charged`, async () => {
      const r = await h.run(`oa/${name}`, { prompt: "x" });
      expect(r.status).toBe("FAILED");
      expect(r.error).toBe(
        "Image 0 of the upstream's answer links to a non-public address; it was not fetched.",
      );
      expect(r.files).toEqual([]);
      expect(r.charged).toBe(0n);
      expect(r.invariants).toEqual([]);
    });
  }
});
