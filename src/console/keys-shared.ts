/**
 * The keys pages' form rules (keys-pages.ts, keys-edit-pages.ts): a key's name, limits and controls
 * as typed, checked with the API's own rules (decimalFromInput, key-controls.ts).
 */
import { type KeyControlsInput, keyControlsOf } from "../accounts/key-controls.ts";
import { KEY_IN_FLIGHT_MAX, KEY_NAME_MAX_LENGTH, KEY_WRITES_MAX } from "../accounts/schemas.ts";
import type { ApiKeyRow, KeyChanges } from "../accounts/store.ts";
import { decimalFromInput } from "../http/inputs.ts";
import { DomainError } from "../lib/errors.ts";
import { rfc3339 } from "../lib/time.ts";
import { type Form, field } from "./kit.ts";

export /** "" -> null (no limit); otherwise the API's decimal rule (at most 6 places, not negative). */
function limitInput(text: string): bigint | null {
  const t = text.trim();
  return t === "" ? null : decimalFromInput(t, "Monthly limit");
}

export function keyName(text: string): string {
  const name = text.trim();
  if (name.length < 1 || name.length > KEY_NAME_MAX_LENGTH) {
    throw new DomainError("validation_error", `Name must be 1 to ${KEY_NAME_MAX_LENGTH} characters.`, {
      param: "name",
    });
  }
  return name;
}

/** "" -> null (the server's default); else a whole number 1..max (the API's bounds). */
function countInput(text: string, label: string, max: number): number | null {
  const t = text.trim();
  if (t === "") return null;
  if (!/^[0-9]{1,9}$/.test(t) || Number(t) < 1 || Number(t) > max)
    throw new DomainError("validation_error", `${label} must be a whole number from 1 to ${max}, or empty.`);
  return Number(t);
}

/** Entries separated by commas, spaces or lines; none -> null (no limit). */
function listInput(text: string): string[] | null {
  const entries = text.split(/[\s,]+/).filter((e) => e !== "");
  return entries.length === 0 ? null : entries;
}

/**
 * The `Expires` date input: the key works through that day (UTC), so it expires at the start of
 * the next one; "" -> never. Anything else is taken as RFC 3339, as the API takes it.
 */
function expiresInput(text: string): string | null {
  const t = text.trim();
  if (t === "") return null;
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  if (!day) return t;
  const next = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]) + 1);
  return Number.isNaN(next) ? t : rfc3339(next / 1000);
}

/** The date the `Expires` input shows for a key: the last day it works (UTC); "" for never. */
export function expiresDay(key: Pick<ApiKeyRow, "expires_at">): string {
  return key.expires_at === null ? "" : rfc3339(Number(key.expires_at) - 1)!.slice(0, 10);
}

/** A list column as the textarea shows it: one entry a line. */
export function listText(column: string | null): string {
  return column === null ? "" : (JSON.parse(column) as string[]).join("\n");
}

/** What the create and edit forms hold, as typed (re-shown when refused). */
export interface KeyForm {
  name: string;
  limit: string;
  writes: string;
  inFlight: string;
  expires: string;
  /** The date the edit form showed: unchanged, an expiry set through the API keeps its time. */
  expiresWas: string;
  models: string;
  addresses: string;
}

export function keyFormOf(form: Form): KeyForm {
  return {
    name: field(form, "name"),
    limit: field(form, "monthly_limit"),
    writes: field(form, "writes_per_minute"),
    inFlight: field(form, "max_in_flight"),
    expires: field(form, "expires"),
    expiresWas: field(form, "expires_was"),
    models: field(form, "allowed_models"),
    addresses: field(form, "allowed_addresses"),
  };
}

/**
 * The changes a form asks for; a field the form did not send stays as it is (the create form has
 * no rate or in-flight fields; the edit form sends every field).
 */
export function keyFormChanges(form: Form, typed: KeyForm): KeyChanges {
  const sent = (name: string) => form.has(name);
  const controls: KeyControlsInput = {
    expires_at:
      sent("expires") && !(sent("expires_was") && typed.expires.trim() === typed.expiresWas)
        ? expiresInput(typed.expires)
        : undefined,
    allowed_models: sent("allowed_models") ? listInput(typed.models) : undefined,
    allowed_cidrs: sent("allowed_addresses") ? listInput(typed.addresses) : undefined,
  };
  return {
    name: sent("name") ? keyName(typed.name) : undefined,
    monthlyLimitMicro: sent("monthly_limit") ? limitInput(typed.limit) : undefined,
    writesPerMinute: sent("writes_per_minute")
      ? countInput(typed.writes, "Writes per minute", KEY_WRITES_MAX)
      : undefined,
    maxInFlight: sent("max_in_flight")
      ? countInput(typed.inFlight, "Requests in flight", KEY_IN_FLIGHT_MAX)
      : undefined,
    ...consoleWords(() => keyControlsOf(controls)),
  };
}

/** The API's field names in a refusal, as the form's labels (what the person sees next to it). */
const LABELS: Record<string, string> = {
  expires_at: "Expires",
  allowed_models: "Allowed models",
  allowed_cidrs: "Allowed addresses",
};

function consoleWords<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const label = err instanceof DomainError && err.param ? LABELS[err.param] : undefined;
    if (!label || !(err instanceof DomainError)) throw err;
    throw new DomainError(err.code, err.message.replaceAll(err.param!, label), { param: err.param });
  }
}
