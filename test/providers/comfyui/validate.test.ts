import { describe, expect, test } from "bun:test";
import { validateComfyModels } from "../../../src/providers/comfyui/index.ts";
import { SDXL_SCHEMA, settings } from "./helpers.ts";

const cfg = settings("http://127.0.0.1:8188");
const entry = (over: Partial<Parameters<typeof validateComfyModels>[2][number]> = {}) => ({
  id: "local/sdxl",
  upstream_model: "sdxl",
  input_schema: SDXL_SCHEMA as Record<string, unknown>,
  index: 3,
  ...over,
});

describe("validateComfyModels", () => {
  test("a model whose workflow exists and whose placeholders are input fields passes", () => {
    expect(() => validateComfyModels("comfy", cfg, [entry()])).not.toThrow();
  });

  test("a missing workflow names the entry", () => {
    expect(() => validateComfyModels("comfy", cfg, [entry({ upstream_model: "flux" })])).toThrow(
      'models[3] (local/sdxl).upstream_model: no workflow "flux" in providers.comfy.workflows',
    );
  });

  test("a placeholder without an input field names the workflow and the entry", () => {
    const { steps: _steps, ...props } = SDXL_SCHEMA.properties;
    const schema = { ...SDXL_SCHEMA, properties: props };
    expect(() => validateComfyModels("comfy", cfg, [entry({ input_schema: schema })])).toThrow(
      "providers.comfy.workflows.sdxl: placeholder {{steps}} has no input field in models[3] (local/sdxl)",
    );
  });

  test("a schema without properties fails on the first placeholder", () => {
    expect(() => validateComfyModels("comfy", cfg, [entry({ input_schema: {}, index: 0 })])).toThrow(
      /^providers\.comfy\.workflows\.sdxl: placeholder \{\{\w+\}\} has no input field in models\[0\] \(local\/sdxl\)$/,
    );
  });

  test("a missing upstream_model", () => {
    expect(() => validateComfyModels("comfy", cfg, [entry({ upstream_model: null, index: 1 })])).toThrow(
      "models[1] (local/sdxl).upstream_model: required for comfyui models (the workflow name)",
    );
  });

  test("a UI-format or non-object workflow is refused", () => {
    const ui = settings("http://x", { workflows: { sdxl: { nodes: [], links: [] } } });
    expect(() => validateComfyModels("comfy", ui, [entry()])).toThrow(
      "providers.comfy.workflows.sdxl: is in ComfyUI's UI format",
    );
    const bad = settings("http://x", { workflows: { sdxl: "nope" } });
    expect(() => validateComfyModels("comfy", bad, [entry()])).toThrow(
      "providers.comfy.workflows.sdxl: must be",
    );
  });
});
