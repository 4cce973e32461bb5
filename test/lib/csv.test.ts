import { describe, expect, test } from "bun:test";
import { csvCell, toCsv } from "../../src/lib/csv.ts";
import { parseCsv } from "../helpers/csv.ts";

describe("CSV (RFC 4180)", () => {
  test("a header row, one record per row, CRLF after every record", () => {
    expect(
      toCsv(
        ["a", "b"],
        [
          ["x", 1n],
          ["y", 2],
        ],
      ),
    ).toBe("a,b\r\nx,1\r\ny,2\r\n");
    expect(toCsv(["only"], [])).toBe("only\r\n");
  });

  test("quotes fields with commas, quotes, CR or LF, doubling inner quotes", () => {
    expect(csvCell("ci, nightly")).toBe('"ci, nightly"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("two\nlines")).toBe('"two\nlines"');
    expect(csvCell("cr\rhere")).toBe('"cr\rhere"');
    expect(csvCell("plain")).toBe("plain");
    const text = toCsv(["name"], [['a, "b"\r\nc']]);
    expect(parseCsv(text)).toEqual([["name"], ['a, "b"\r\nc']]);
  });

  test("null and undefined are empty cells; numbers are written as they are", () => {
    expect(toCsv(["a", "b", "c"], [[null, undefined, -5n]])).toBe("a,b,c\r\n,,-5\r\n");
    expect(csvCell("-1.50")).toBe("-1.50");
    expect(csvCell("12")).toBe("12");
  });
});
