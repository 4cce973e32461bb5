import { describe, expect, test } from "bun:test";
import { fillTemplate, isImageField, placeholders } from "../../../src/providers/comfyui/index.ts";
import { ProviderError } from "../../../src/providers/types.ts";
import { SDXL, SDXL_SCHEMA } from "./helpers.ts";

type Nodes = Record<string, { inputs: Record<string, unknown> }>;

describe("comfyui workflow templates", () => {
  test("an exact placeholder keeps the input's JSON type", () => {
    const out = fillTemplate(
      SDXL,
      { prompt: "a cat", seed: 42, steps: 30, cfg: 6.5, width: 768, height: 512 },
      SDXL_SCHEMA,
    ) as Nodes;
    expect(out["3"]!.inputs.seed).toBe(42);
    expect(out["3"]!.inputs.steps).toBe(30);
    expect(out["3"]!.inputs.cfg).toBe(6.5);
    expect(out["5"]!.inputs.width).toBe(768);
    expect(out["6"]!.inputs.text).toBe("a cat");
    // Non-placeholder values and node links are untouched.
    expect(out["3"]!.inputs.model).toEqual(["4", 0]);
    expect(out["7"]!.inputs.text).toBe("blurry, low quality");
  });

  test("booleans, objects and spaced placeholders", () => {
    const t = { "1": { class_type: "X", inputs: { flag: "{{ flag }}", obj: "{{obj}}" } } };
    const schema = { properties: { flag: {}, obj: {} } };
    const out = fillTemplate(t, { flag: false, obj: { a: [1, 2] } }, schema) as Nodes;
    expect(out["1"]!.inputs.flag).toBe(false);
    expect(out["1"]!.inputs.obj).toEqual({ a: [1, 2] });
  });

  test("a placeholder inside a longer string takes the value's text", () => {
    const t = { "1": { class_type: "X", inputs: { s: "seed={{seed}} p={{prompt}} o={{obj}}!" } } };
    const out = fillTemplate(t, { seed: 7, prompt: "hi", obj: { k: 1 } }, {}) as Nodes;
    expect(out["1"]!.inputs.s).toBe('seed=7 p=hi o={"k":1}!');
    const sdxl = fillTemplate(SDXL, { prompt: "x", seed: 99 }, SDXL_SCHEMA) as Nodes;
    expect(sdxl["9"]!.inputs.filename_prefix).toBe("gengate_99");
  });

  test("missing fields take the input_schema default (also for null)", () => {
    const out = fillTemplate(SDXL, { prompt: "a dog", steps: null }, SDXL_SCHEMA) as Nodes;
    expect(out["3"]!.inputs.steps).toBe(20);
    expect(out["3"]!.inputs.cfg).toBe(7);
    expect(out["3"]!.inputs.seed).toBe(0);
    expect(out["5"]!.inputs.height).toBe(1024);
  });

  test("a missing field without a default is an input error naming it", () => {
    let err: unknown;
    try {
      fillTemplate(SDXL, { seed: 1 }, SDXL_SCHEMA);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe("input");
    expect((err as ProviderError).message).toContain('"prompt"');
  });

  test("the template is never modified, and the copy shares nothing with it", () => {
    const before = structuredClone(SDXL);
    const obj = { nested: [1] };
    const t = { "1": { class_type: "X", inputs: { o: "{{o}}", link: ["2", 0] } } };
    const out = fillTemplate(SDXL, { prompt: "a", seed: 5 }, SDXL_SCHEMA) as Nodes;
    (out["3"]!.inputs.model as unknown[]).push("changed");
    expect(SDXL).toEqual(before);
    const out2 = fillTemplate(t, { o: obj }, {}) as Nodes;
    (out2["1"]!.inputs.o as { nested: number[] }).nested.push(2);
    (out2["1"]!.inputs.link as unknown[]).length = 0;
    expect(obj.nested).toEqual([1]);
    expect(t["1"].inputs.link).toEqual(["2", 0]);
    expect(t["1"].inputs.o).toBe("{{o}}");
  });

  test("placeholders lists every field used", () => {
    expect([...placeholders(SDXL)].sort()).toEqual(["cfg", "height", "prompt", "seed", "steps", "width"]);
  });

  test("the image field rule", () => {
    for (const f of [
      "image",
      "image_url",
      "init_image",
      "reference_image_url",
      "mask",
      "mask_url",
      "input_image",
    ]) {
      expect(isImageField(f)).toBe(true);
    }
    for (const f of ["prompt", "num_images", "image_size", "image_strength", "seed", "imagery", "url"]) {
      expect(isImageField(f)).toBe(false);
    }
  });
});
