const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Random bytes are drawn from the CSPRNG 4 KiB at a time: one randomBytes() call per id (every
// request gets one) was 9% of the server's CPU under load (bun --cpu-prof).
const pool = new Uint8Array(4096);
let used = pool.length;

function randomByte(): number {
  if (used === pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  return pool[used++]!;
}

/**
 * Uniform random base62 string. Rejection sampling (bytes >= 248 are dropped) keeps every
 * character equally likely, so `n` characters carry n * log2(62) ≈ 5.95 n bits.
 */
export function randomBase62(n: number): string {
  let out = "";
  while (out.length < n) {
    const b = randomByte();
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

/** Prefixed opaque identifier, e.g. newId("acct") -> "acct_3kV9...". */
export function newId(prefix: string, length = 20): string {
  return `${prefix}_${randomBase62(length)}`;
}

/**
 * Like newId, but the first 8 characters are the creation time (ms, base62, fixed width), so ids
 * made later sort later. Rows keyed by such ids are appended to their indexes instead of landing
 * on a random page of them: fewer distinct pages per commit and per checkpoint.
 */
export function newTimeOrderedId(prefix: string, now = Date.now()): string {
  let t = "";
  for (let v = now, i = 0; i < 8; i++, v = Math.floor(v / 62)) t = BASE62[v % 62] + t;
  return `${prefix}_${t}${randomBase62(12)}`;
}

export const ID_PATTERN = /^[a-z]{2,8}_[0-9A-Za-z]{8,64}$/;

/** A request id: a UUID in its lowercase canonical form (jobs get UUIDv7 ids). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The smallest UUIDv7 of the millisecond `ms` (its 48-bit time prefix, then zeros): every UUIDv7
 * made at or after `ms` sorts at or after it, every one made before sorts before. Jobs get UUIDv7
 * ids, so a time range of jobs is a range of ids, which the (account_id, id) index serves.
 */
export function uuidV7Floor(ms: number): string {
  const h = Math.min(Math.max(0, Math.floor(ms)), 2 ** 48 - 1)
    .toString(16)
    .padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
}
