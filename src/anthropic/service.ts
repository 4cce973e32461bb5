import type { ModelAccess } from "../catalog/access.ts";
import { promptTokens } from "../chat/service.ts";
import type { ChatRequest } from "../chat/validate.ts";
import { type ModelDeps, resolveTextModel } from "../jobs/models.ts";

/**
 * count_tokens: the prompt's tokens exactly as a Messages call would reserve them (chat's
 * `promptTokens`: the sandbox's own count, an upstream's conservative estimate). Free: no job, no
 * hold; the model must still be a text model of the catalog.
 */
export function countMessageTokens(
  deps: ModelDeps,
  who: ModelAccess,
  req: ChatRequest,
): { input_tokens: number } {
  return { input_tokens: promptTokens(resolveTextModel(deps, req.model, who), req.messages) };
}
