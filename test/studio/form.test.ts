import { describe, expect, test } from "bun:test";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { validateModelInput } from "../../src/catalog/validate-input.ts";
import {
  fieldId,
  humanName,
  inputEntries,
  labelOf,
  parseStudioForm,
  readStudioForm,
  renderStudioFields,
  studioFields,
} from "../../src/studio/form.ts";
import { formOf, sampleInput } from "./form-fixtures.ts";

const catalog = buildCatalog();

describe("studio form: every sandbox model", () => {
  for (const model of catalog.models) {
    test(`${model.id}: renders every input field, labelled readably (never the raw name), and round-trips`, async () => {
      const input = sampleInput(model);
      await validateModelInput(model, input); // the sample is a valid API input
      const markup = renderStudioFields(model, { values: input }).value;
      for (const f of studioFields(model)) {
        const id = fieldId(f.name);
        expect(markup).toContain(`<label for="${id}">${f.label}</label>`);
        expect(f.label).not.toContain("_");
        expect(f.label).not.toBe(f.name);
        expect(markup).toMatch(new RegExp(`id="${id}" name="${f.name.replace(".", "\\.")}"`));
      }
      const parsed = await parseStudioForm(model, formOf(markup));
      expect(parsed).toEqual({ ok: true, input });
    });
  }

  test("an empty form reads as an empty input (every field omitted)", () => {
    const model = catalog.get("sandbox/image")!;
    const markup = renderStudioFields(model).value;
    expect(readStudioForm(model, formOf(markup))).toEqual({ input: {}, errors: {}, raw: {} });
  });

  test("controls follow the schema: enum select, number bounds, checkbox, textarea, URL + file", () => {
    const video = renderStudioFields(catalog.get("sandbox/video")!).value;
    expect(video).toMatch(
      /<select id="f-resolution" name="resolution"[^>]*><option value="">\(default\)<\/option><option value="480p">/,
    );
    expect(video).toMatch(/name="duration" type="number" inputmode="numeric" step="1" min="1" max="10"/);
    expect(video).toMatch(/<input id="f-sandbox-fail" name="sandbox.fail" type="checkbox" value="true"/);
    expect(video).toMatch(/<textarea id="f-prompt" name="prompt" rows="3" maxlength="8000"/);
    expect(video).toContain(
      '<input id="f-image_url-file" name="upload:image_url" type="file" accept="image/*,video/*,audio/*" data-upload="f-image_url"',
    );
    expect(video).toContain("<legend>Sandbox</legend>");
    const image = renderStudioFields(catalog.get("sandbox/image")!).value;
    expect(image).toMatch(/name="num_images" type="number"[^>]* min="1" max="4"/);
  });

  test("an operator schema: nested required, number, enum of numbers, unknown types as JSON", async () => {
    const [model] = buildCatalog(
      [
        {
          id: "acme/custom",
          kind: "image",
          price_usd_micro: 1000,
          max: 2,
          input_schema: {
            type: "object",
            additionalProperties: false,
            required: ["steps"],
            properties: {
              guidance: { type: "number", minimum: 0, maximum: 20 },
              steps: { type: "integer", enum: [10, 20, 50] },
              loras: { type: "array", items: { type: "string" } },
            },
          },
        },
      ],
      { sandbox: false },
    ).models;
    const input = { guidance: 7.5, steps: 20, loras: ["a", "b"] };
    const markup = renderStudioFields(model!, { values: input }).value;
    expect(markup).toMatch(/name="guidance" type="number" inputmode="decimal" step="any"/);
    expect(await parseStudioForm(model!, formOf(markup))).toEqual({ ok: true, input });
  });

  test("labels: a title wins (trimmed, at most 80 characters), else the name as words, never snake_case", () => {
    expect(humanName("num_images")).toBe("Num images");
    expect(humanName("image_url")).toBe("Image URL");
    expect(humanName("delayMs")).toBe("Delay ms");
    expect(humanName("input_duration_sec")).toBe("Input duration sec");
    expect(humanName("lora-id")).toBe("Lora ID");
    expect(labelOf("num_images", { title: "  Number of images " })).toBe("Number of images");
    expect(labelOf("x", { title: "t".repeat(200) })).toHaveLength(80);
    expect(labelOf("seed", { title: "   " })).toBe("Seed");
    expect(labelOf("seed", { title: 42 })).toBe("Seed");
  });

  test("a run's input as its page lists it: the form's labels and order, groups named, unknown fields last", () => {
    const model = catalog.get("sandbox/image")!;
    const entries = inputEntries(model, {
      seed: 7,
      prompt: "a fox",
      sandbox: { fail: true },
      legacy_field: { a: 1 },
      num_images: 2,
    });
    expect(entries).toEqual([
      { name: "prompt", label: "Prompt", text: "a fox" },
      { name: "num_images", label: "Num images", text: "2" },
      { name: "seed", label: "Seed", text: "7" },
      { name: "sandbox.fail", label: "Sandbox: Fail", text: "true" },
      { name: "legacy_field", label: "Legacy field", text: '{"a":1}' },
    ]);
    // A model the catalog no longer has: the names as words.
    expect(inputEntries(null, { num_images: 3 })).toEqual([
      { name: "num_images", label: "Num images", text: "3" },
    ]);
  });
});
