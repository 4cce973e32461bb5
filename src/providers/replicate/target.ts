/** Where a create goes, from the model's `upstream_model`. */
export type ReplicateTarget =
  | { kind: "model"; owner: string; name: string }
  | { kind: "version"; version: string };

const PART = "[A-Za-z0-9][A-Za-z0-9._-]*";
const VERSION = /^[0-9a-f]{64}$/i;
const MODEL = new RegExp(`^(${PART})/(${PART})$`);
const MODEL_VERSION = new RegExp(`^(${PART})/(${PART}):([0-9a-f]{64})$`, "i");

/**
 * "owner/name" -> the model's own predictions endpoint (its latest version, or an official model);
 * "owner/name:<64 hex>" or a bare 64-hex version -> POST /predictions with that version.
 * Anything else -> null (a configuration error).
 */
export function parseUpstreamModel(raw: string | null): ReplicateTarget | null {
  if (!raw) return null;
  const s = raw.trim();
  if (VERSION.test(s)) return { kind: "version", version: s.toLowerCase() };
  const mv = MODEL_VERSION.exec(s);
  if (mv) return { kind: "version", version: mv[3]!.toLowerCase() };
  const m = MODEL.exec(s);
  if (m) return { kind: "model", owner: m[1]!, name: m[2]! };
  return null;
}
