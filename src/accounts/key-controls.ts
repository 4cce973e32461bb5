import { formatIp, parseCidr } from "../lib/addresses.ts";
import { DomainError } from "../lib/errors.ts";
import type { KeyControls } from "./store.ts";

/**
 * The key controls as every surface takes them (the API, the admin API, the CLI, the console):
 * `expires_at` (RFC 3339 or null), `allowed_models` (exact ids or prefixes ending in `*`) and
 * `allowed_cidrs` (IPv4 and IPv6 blocks), null meaning no limit. Checked here once, so a list the
 * store keeps is always one the enforcement (requirePrincipal, src/jobs/models.ts) can read.
 */

/** At most this many entries per list: a key's principal is cached and checked per request. */
export const KEY_LIST_MAX_ENTRIES = 100;
/** At most this long an entry: model ids are under 100 characters, a CIDR under 50. */
export const KEY_LIST_MAX_LENGTH = 200;

/** What a surface received, before checking: undefined leaves a setting unchanged. */
export interface KeyControlsInput {
  expires_at?: string | null;
  allowed_models?: readonly string[] | null;
  allowed_cidrs?: readonly string[] | null;
}

// RFC 3339: a date, a time, and a zone (Z or an offset); fractions of a second are dropped.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
// An id of the catalog's alphabet, or such a prefix ending in `*` (alone, `*` is every model).
const MODEL_PATTERN = /^[A-Za-z0-9._:/@+-]*\*?$/;

function invalid(param: string, message: string): DomainError {
  return new DomainError("validation_error", message, {
    param,
    details: [{ path: `body.${param}`, message }],
  });
}

/** Epoch seconds of an RFC 3339 time that is still to come; null stays null. */
export function parseExpiresAt(raw: string | null, now = Date.now()): bigint | null {
  if (raw === null) return null;
  const ms = RFC3339.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms))
    throw invalid("expires_at", `expires_at must be an RFC 3339 time such as 2027-01-31T00:00:00Z, or null.`);
  if (ms <= now)
    throw invalid("expires_at", "expires_at is in the past; to stop a key now, disable or revoke it.");
  return BigInt(Math.floor(ms / 1000));
}

function boundedList(param: string, list: readonly string[]): string[] {
  if (list.length > KEY_LIST_MAX_ENTRIES)
    throw invalid(param, `${param} has ${list.length} entries; at most ${KEY_LIST_MAX_ENTRIES}.`);
  const out = list.map((e) => e.trim());
  for (const e of out)
    if (e.length === 0 || e.length > KEY_LIST_MAX_LENGTH)
      throw invalid(param, `Each entry of ${param} is 1 to ${KEY_LIST_MAX_LENGTH} characters.`);
  return [...new Set(out)];
}

export function parseAllowedModels(list: readonly string[] | null): string[] | null {
  if (list === null) return null;
  const out = boundedList("allowed_models", list);
  for (const e of out)
    if (!MODEL_PATTERN.test(e))
      throw invalid(
        "allowed_models",
        `"${e.slice(0, 60)}" is not a model id or a prefix ending in * (such as fal-ai/flux/*).`,
      );
  return out;
}

/** Blocks in canonical text (a bare address is its /32 or /128). */
export function parseAllowedCidrs(list: readonly string[] | null): string[] | null {
  if (list === null) return null;
  return boundedList("allowed_cidrs", list).map((e) => {
    try {
      const c = parseCidr(e);
      return `${formatIp(c)}/${c.prefix}`;
    } catch (err) {
      throw invalid("allowed_cidrs", (err as Error).message);
    }
  });
}

/** The input checked and made the store's; settings not sent stay undefined (unchanged). */
export function keyControlsOf(input: KeyControlsInput): KeyControls {
  return {
    expiresAt: input.expires_at === undefined ? undefined : parseExpiresAt(input.expires_at),
    allowedModels: input.allowed_models === undefined ? undefined : parseAllowedModels(input.allowed_models),
    allowedCidrs: input.allowed_cidrs === undefined ? undefined : parseAllowedCidrs(input.allowed_cidrs),
  };
}
