/** A JSON.stringify replacer that writes bigints (money, SQLite rows read with safeIntegers) as decimal strings. */
export function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/** JSON.stringify that tolerates bigint: each becomes its decimal string. */
export function stringifyWithBigints(value: unknown): string {
  return JSON.stringify(value, bigintReplacer);
}
