import { createHash, randomBytes } from "node:crypto";

/**
 * The text of a redeem code: 20 characters of a 32-letter alphabet without look-alikes (no 0, 1,
 * I, O), 100 random bits, written in four groups: `K7RM2-QX9WD-H4NTB-6YCZP`. Case, dashes and
 * spaces do not matter: the stored SHA-256 is of the normalised form (upper case, separators
 * dropped), so a code read over the phone or pasted with a trailing space still works.
 */
export const CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ";
export const CODE_LENGTH = 20;
/** A code as typed: generous for spaces and dashes, bounded so no body asks for unbounded work. */
export const CODE_INPUT_MAX_LENGTH = 100;
const GROUP = 5;

/** A new random code, grouped for reading (`XXXXX-XXXXX-XXXXX-XXXXX`). */
export function newCodeText(): string {
  // 32 letters: one byte's low 5 bits pick one uniformly (256 is a multiple of 32).
  let out = "";
  for (const b of randomBytes(CODE_LENGTH)) out += CODE_ALPHABET[b & 31];
  return out.match(new RegExp(`.{${GROUP}}`, "g"))!.join("-");
}

/** Upper case, spaces and dashes dropped; null when what is left cannot be a code. */
export function normaliseCode(text: string): string | null {
  const s = text.replace(/[\s\-‐‑‒–—]/g, "").toUpperCase();
  if (s.length !== CODE_LENGTH) return null;
  for (const ch of s) if (!CODE_ALPHABET.includes(ch)) return null;
  return s;
}

/** SHA-256 of a normalised code: what is stored and looked up. */
export function codeHash(normalised: string): Buffer {
  return createHash("sha256").update(normalised, "utf8").digest();
}
