import { describe, expect, test } from "bun:test";
import { csvCell, toCsv } from "../../src/lib/csv.ts";
import { parseCsv } from "../helpers/csv.ts";

describe("CSV formula injection", () => {
  test("text starting with = + - @ (or tab, CR) gets a leading ' so spreadsheets show it as text", () => {
    for (const evil of ['=HYPERLINK("http://x")', "+1+2", "-2+3", "@SUM(A1)", "\tcmd", "\r=1"]) {
      const cell = parseCsv(toCsv(["v"], [[evil]]))[1]![0]!;
      expect(cell).toBe(`'${evil}`);
    }
  });

  test("a neutralised cell that also needs quoting is both prefixed and quoted", () => {
    expect(csvCell('=cmd|" /C calc"!A0, x')).toBe(`"'=cmd|"" /C calc""!A0, x"`);
  });

  test("numbers (negative amounts included) are not altered; text that merely contains = is", () => {
    expect(csvCell("-0.000001")).toBe("-0.000001");
    expect(csvCell(-3n)).toBe("-3");
    expect(csvCell("a=b")).toBe("a=b");
    expect(csvCell("-1e5")).toBe("'-1e5");
    expect(csvCell("- 1")).toBe("'- 1");
  });
});
