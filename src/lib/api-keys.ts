import { createHash, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "./ids.ts";

/** API keys: "gk_" + 40 base62 characters (≈238 bits). Only their SHA-256 is stored. */
export const API_KEY_PREFIX = "gk_";
const API_KEY_BODY = 40;
/** Characters of a key kept in clear for listings ("gk_AbC1234"). */
export const DISPLAY_PREFIX_LENGTH = 10;
const API_KEY_SHAPE = /^gk_[0-9A-Za-z]{32,128}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase62(API_KEY_BODY);
}

export function looksLikeApiKey(value: string): boolean {
  return API_KEY_SHAPE.test(value);
}

export function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/** Constant-time equality of two digests (lengths are public: both are SHA-256). */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
