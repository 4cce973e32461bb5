import { describe, expect, test } from "bun:test";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { validateModelInput } from "../../src/catalog/validate-input.ts";
import type { DomainError } from "../../src/lib/errors.ts";
import { parseStudioForm, renderStudioFields } from "../../src/studio/form.ts";

const catalog = buildCatalog();
const image = catalog.get("sandbox/image")!;
const video = catalog.get("sandbox/video")!;
const form = (fields: Record<string, string>) => new URLSearchParams(fields);

describe("studio form: errors next to their field, in the API's words", () => {
  test("a number above the model's max: the schema's message on that field", async () => {
    const r = await parseStudioForm(image, form({ prompt: "fox", num_images: "9" }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // The API's own validation says the same for the same input.
    let api: DomainError | null = null;
    try {
      await validateModelInput(image, { prompt: "fox", num_images: 9 });
    } catch (e) {
      api = e as DomainError;
    }
    expect(api?.details?.[0]).toEqual({ path: "input.num_images", message: r.errors.num_images! });
    expect(r.errors.num_images).toBe("must be <= 4");
  });

  test("a required field left empty", async () => {
    const r = await parseStudioForm(image, form({ num_images: "2" }));
    expect(r).toEqual({ ok: false, input: { num_images: 2 }, errors: { prompt: "is required" } });
  });

  test("text where a number belongs, a value outside the enum, a nested field", async () => {
    const r = await parseStudioForm(
      video,
      form({ prompt: "x", duration: "five", resolution: "4k", "sandbox.delay_ms": "1.5" }),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual({
      duration: "must be a whole number",
      resolution: "is not one of the allowed values",
      "sandbox.delay_ms": "must be a whole number",
    });
    const nested = await parseStudioForm(video, form({ prompt: "x", "sandbox.delay_ms": "700000" }));
    expect(nested.ok ? {} : nested.errors).toEqual({ "sandbox.delay_ms": "must be <= 600000" });
  });

  test("errors render next to the field (aria-invalid, described by the message), typed text kept", async () => {
    const r = await parseStudioForm(video, form({ prompt: "x", duration: "five" }));
    const markup = renderStudioFields(video, {
      values: r.input,
      errors: r.ok ? {} : r.errors,
      raw: { duration: "five" },
    }).value;
    expect(markup).toMatch(
      /name="duration"[^>]*value="five" aria-describedby="f-duration-hint f-duration-error" aria-invalid="true"/,
    );
    expect(markup).toContain('<span class="field-error" id="f-duration-error">must be a whole number</span>');
  });

  test("escaping: values and messages are text, never markup", () => {
    const markup = renderStudioFields(image, {
      values: { prompt: "</textarea><script>alert(1)</script>" },
      errors: { prompt: "<b>bad</b>" },
    }).value;
    expect(markup).not.toContain("<script>");
    expect(markup).toContain("&lt;/textarea&gt;&lt;script&gt;");
    expect(markup).toContain("&lt;b&gt;bad&lt;/b&gt;");
  });
});
