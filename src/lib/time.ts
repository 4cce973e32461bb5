/** Seconds since the epoch, as stored in the database. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** RFC 3339 UTC timestamp from epoch seconds (null stays null). */
export function rfc3339(seconds: number | bigint | null | undefined): string | null {
  if (seconds === null || seconds === undefined) return null;
  return new Date(Number(seconds) * 1000).toISOString().replace(".000Z", "Z");
}
