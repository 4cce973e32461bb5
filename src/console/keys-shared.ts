/**
 * The keys pages' form rules (keys-pages.ts, keys-limit-pages.ts): a key's name and a monthly limit
 * as typed, checked with the API's own rules.
 */
import { KEY_NAME_MAX_LENGTH } from "../accounts/schemas.ts";
import { decimalFromInput } from "../http/inputs.ts";
import { DomainError } from "../lib/errors.ts";

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
