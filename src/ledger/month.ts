/** Calendar month (UTC) of an epoch-seconds instant, as "YYYY-MM": the key spend period. */
export function monthOf(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 7);
}

/** Validates "YYYY-MM" (months 01-12, years 2000-2999); returns null otherwise. */
export function parseMonth(text: string): string | null {
  return /^2\d{3}-(0[1-9]|1[0-2])$/.test(text) ? text : null;
}
