import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// scripts/build leaves the file-type package out of the binary (`--external file-type`): Elysia
// imports it only to check the `extension` option of t.File()/t.Files(). This test keeps that true.

const ROOT = join(import.meta.dir, "../..");

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(path));
    else if (/\.tsx?$/.test(e.name)) out.push(path);
  }
  return out;
}

/** The argument text of every call to t.File( / t.Files( in `text` (balanced parentheses). */
function fileSchemaArguments(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\bt\.Files?\(/g)) {
    let depth = 1;
    let i = m.index + m[0].length;
    const start = i;
    for (; i < text.length && depth > 0; i++) {
      if (text[i] === "(") depth++;
      else if (text[i] === ")") depth--;
    }
    found.push(text.slice(start, i - 1));
  }
  return found;
}

describe("build flags", () => {
  test("the scan finds the option where it is used", () => {
    expect(fileSchemaArguments('t.Object({ a: t.File({ extension: "image/*" }), b: t.Files() })')).toEqual([
      '{ extension: "image/*" }',
      "",
    ]);
  });

  test("no schema uses t.File's `extension` option, the one use of file-type, left out of the binary", () => {
    expect(readFileSync(join(ROOT, "scripts/build"), "utf8")).toContain("--external file-type");
    const offenders = sources(join(ROOT, "src")).filter((path) =>
      fileSchemaArguments(readFileSync(path, "utf8")).some((args) => args.includes("extension")),
    );
    expect(offenders).toEqual([]);
  });
});
