import { DomainError } from "../lib/errors.ts";

/**
 * Which models a caller may use: an API key's `allowed_models` (exact ids, or prefixes ending in
 * `*`), null for every model (a key without the list, the studio's people). Every door resolves
 * its model through src/jobs/models.ts (and the estimate through `checkModelAllowed`), which
 * take it as a required argument: a door cannot forget it.
 */
export interface ModelAccess {
  allowedModels: readonly string[] | null;
}

/** The studio's people and operators: no per-key list. */
export const EVERY_MODEL: ModelAccess = { allowedModels: null };

/** Whether an id is in an allow-list: an exact entry, or an entry `prefix*` it starts with. */
export function modelAllowed(allowed: readonly string[] | null, modelId: string): boolean {
  if (allowed === null) return true;
  return allowed.some((e) => (e.endsWith("*") ? modelId.startsWith(e.slice(0, -1)) : e === modelId));
}

/**
 * 403 model_not_allowed for a model outside the caller's list, checked before the catalog so a
 * limited key learns nothing about the models it may not use (an unknown id is refused alike).
 */
export function checkModelAllowed(access: ModelAccess, modelId: string, param = "model"): void {
  if (!modelAllowed(access.allowedModels, modelId))
    throw new DomainError(
      "model_not_allowed",
      `This API key may not use "${modelId.slice(0, 200)}": it is outside the key's allowed_models.`,
      { param },
    );
}
