import { ProviderError } from "../types.ts";

/** fal namespaces whose app ids keep three segments (fal's client does the same). */
const NAMESPACES = new Set(["workflows", "comfy"]);
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;
/** fal request ids are UUIDs; anything path-safe and short is accepted. */
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Where one fal request lives: the app's queue paths, built from the base URL and the model id. */
export interface FalRequestUrls {
  id: string;
  statusUrl: string;
  resultUrl: string;
  cancelUrl: string;
}

/** Checks a model id ("owner/alias[/path...]") and returns it URL-safe. */
export function falModelId(modelId: string): string {
  const parts = modelId.split("/");
  if (parts.length < 2 || !parts.every((p) => SEGMENT.test(p))) {
    throw new ProviderError(
      "failed",
      `"${modelId.slice(0, 100)}" is not a fal model id (owner/alias[/path]).`,
    );
  }
  return parts.join("/");
}

/**
 * The app part of a model id, which status/result/cancel paths use: the FIRST TWO segments
 * ("fal-ai/flux/dev" -> "fal-ai/flux"), three for a namespace ("workflows/acme/flow").
 */
export function falAppId(modelId: string): string {
  const parts = falModelId(modelId).split("/");
  const n = NAMESPACES.has(parts[0]!) && parts.length >= 3 ? 3 : 2;
  return parts.slice(0, n).join("/");
}

export function checkRequestId(id: unknown): string {
  if (typeof id !== "string" || !REQUEST_ID.test(id)) {
    throw new ProviderError("failed", "fal answered the submit without a usable request_id.");
  }
  return id;
}

export function buildRequestUrls(base: string, modelId: string, requestId: string): FalRequestUrls {
  const prefix = `${base}/${falAppId(modelId)}/requests/${encodeURIComponent(requestId)}`;
  return { id: requestId, statusUrl: `${prefix}/status`, resultUrl: prefix, cancelUrl: `${prefix}/cancel` };
}

/**
 * A URL from fal's submit reply, used only when it points under the configured base URL: the
 * API key is sent with it, so a reply must not be able to send the key to another host (or skip
 * a proxy the operator put in front of fal).
 */
export function trustedUrl(base: string, candidate: unknown): string | null {
  if (typeof candidate !== "string") return null;
  try {
    const b = new URL(`${base}/`);
    const c = new URL(candidate);
    if (c.origin !== b.origin || !c.pathname.startsWith(b.pathname) || c.username || c.password) return null;
    return c.href;
  } catch {
    return null;
  }
}
