import type { ProviderSettings } from "../../config/schema.ts";
import { placeholders, schemaProperties, workflowShapeProblem } from "./template.ts";

export interface ComfyModelEntry {
  id: string;
  upstream_model: string | null;
  input_schema: Record<string, unknown>;
  /** Position in the config's `models` list, for the message. */
  index: number;
}

/**
 * Config-time check of the models served by a comfyui provider: each names an existing,
 * API-format workflow, and every {{placeholder}} of that workflow is a property of the model's
 * input_schema. Throws Error with a one-line message naming the entry.
 */
export function validateComfyModels(
  providerName: string,
  cfg: ProviderSettings,
  models: ComfyModelEntry[],
): void {
  const workflows = cfg.workflows ?? {};
  for (const m of models) {
    const entry = `models[${m.index}] (${m.id})`;
    const name = m.upstream_model;
    if (name === null || name === "") {
      throw new Error(`${entry}.upstream_model: required for comfyui models (the workflow name)`);
    }
    if (!Object.hasOwn(workflows, name)) {
      throw new Error(
        `${entry}.upstream_model: no workflow "${name}" in providers.${providerName}.workflows`,
      );
    }
    const where = `providers.${providerName}.workflows.${name}`;
    const template = workflows[name];
    const problem = workflowShapeProblem(template);
    if (problem) throw new Error(`${where}: ${problem}`);
    const props = schemaProperties(m.input_schema);
    for (const field of placeholders(template)) {
      if (!Object.hasOwn(props, field)) {
        throw new Error(`${where}: placeholder {{${field}}} has no input field in ${entry}`);
      }
    }
  }
}
