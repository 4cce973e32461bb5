/**
 * CSV files for spreadsheets (RFC 4180): fields separated by commas, records by CRLF, a field
 * quoted when it holds a comma, a quote, CR or LF, quotes doubled inside it. Formula-injection
 * safe: a text cell starting with = + - @ (or a tab or CR, which some spreadsheets skip before
 * reading a formula) gets a leading ' so a spreadsheet shows it as text instead of evaluating it.
 * Numbers (bigint, number, and text that is exactly a decimal number such as "-1.50") are
 * written as they are: a negative amount stays a number, and a number cannot be a formula.
 */
export type CsvValue = string | bigint | number | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** One cell: numbers as digits, null/undefined as empty, text neutralised and quoted as needed. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "bigint" || typeof value === "number") return String(value);
  if (DECIMAL.test(value)) return value;
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A whole file: the header row, then one record per row, each ended by CRLF. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  const lines = [header.map(csvCell).join(",")];
  for (const row of rows) lines.push(row.map(csvCell).join(","));
  return `${lines.join("\r\n")}\r\n`;
}
