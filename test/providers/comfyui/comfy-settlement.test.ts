import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { createComfyProvider } from "../../../src/providers/comfyui/index.ts";
import { settlementHarness } from "../../queue/settlement-harness.ts";
import { mp4, png } from "../media-fixtures.ts";
import { SDXL, SDXL_SCHEMA, settings } from "./helpers.ts";
import { startMockComfy } from "./mock-comfy.ts";

/**
 * ComfyUI reports no units: a workflow writes whatever files it writes. The settlement counts and
 * measures the files read back through /view, so a workflow that saves fewer or smaller images
 * than the request priced (a batch_size of 1, a fixed latent size) is charged for those.
 */
const mock = startMockComfy();
mock.slowMs = 0;
const cfg = settings(mock.url, { workflows: { sdxl: SDXL } });
/** The SDXL schema (its defaults fill the template) plus a pricing field. */
const schemaWith = (field: string) => ({
  ...SDXL_SCHEMA,
  properties: { ...SDXL_SCHEMA.properties, [field]: { type: "integer" } },
});
const h = await settlementHarness({
  provider: createComfyProvider("comfy", cfg),
  providerConfig: { type: "comfyui", base_url: mock.url, workflows: { sdxl: SDXL } },
  models: [
    {
      id: "c/img",
      kind: "image",
      provider: "comfy",
      upstream_model: "sdxl",
      price_usd_micro: 1000,
      max: 4,
      input_schema: schemaWith("num_images"),
    },
    {
      id: "c/mp",
      kind: "image",
      unit: "megapixel",
      provider: "comfy",
      upstream_model: "sdxl",
      price_usd_micro: 1_000_000,
      max: 4,
      input_schema: SDXL_SCHEMA,
    },
    {
      id: "c/vid",
      kind: "video",
      provider: "comfy",
      upstream_model: "sdxl",
      price_usd_micro: 10_000,
      max: 10,
      input_schema: schemaWith("duration"),
    },
  ],
});
afterAll(async () => {
  await h.stop();
  mock.stop();
});
const outputs = (files: [string, Uint8Array][]) => {
  mock.outputFiles = files.map(([filename]) => ({ filename, subfolder: "", type: "output" }));
  mock.files = new Map(files);
};
beforeEach(() => outputs([["gengate_00001_.png", mock.png]]));

describe("comfyui settlement", () => {
  test("a workflow that saves 2 images for num_images 4: 2 charged", async () => {
    outputs([
      ["a.png", png(16, 16)],
      ["b.png", png(16, 16, 2)],
    ]);
    const r = await h.run("c/img", { prompt: "x", num_images: 4 });
    expect(r.status).toBe("COMPLETED");
    expect(r.held).toBe(4000n);
    expect(r.charged).toBe(2000n);
    expect(r.invariants).toEqual([]);
  });

  test("per megapixel: an 8x6 image for a 1024x1024 request is charged for 48 pixels", async () => {
    const r = await h.run("c/mp", { prompt: "x", width: 1024, height: 1024 });
    expect(r.held).toBe(1024n * 1024n);
    expect(r.charged).toBe(48n);
    expect(r.units).toBe("0.000048");
  });

  test("video: a 2 s clip for 6 s: 2 s charged", async () => {
    outputs([["clip.mp4", mp4(2)]]);
    const r = await h.run("c/vid", { prompt: "x", duration: 6 });
    expect(r.held).toBe(60_000n);
    expect(r.charged).toBe(20_000n);
    expect(r.invariants).toEqual([]);
  });
});
