import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

// Comments and docs say where to read on: every repository path they name must exist (a renamed or
// split file leaves a dangling pointer behind), and none may send the reader to a document that is
// not in the repository (the contracts the project was written against: what a reader needs of them
// is in docs/).

const ROOT = join(import.meta.dir, "../..");

/** Directories that are not the project's own text: dependencies, build and test output, git. */
const SKIP_DIRS = new Set(["node_modules", ".git", ".tools", "dist", ".data", "coverage"]);

function walk(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name) && !e.name.startsWith(".snippets-"))
        out.push(...walk(join(dir, e.name), keep));
    } else if (e.isFile() && keep(e.name)) out.push(join(dir, e.name));
  }
  return out;
}

/** The documents outside the repository, by name (built here so that this file does not name them). */
const OUTSIDE = ["CONTRACT", "CONSOLE-PLAN", "CONSOLE", "STACK", "SCALE-OUT", "SPEC", "CLIENTS", "UPSTREAMS"];
const OUTSIDE_NAME = new RegExp(`(?<![\\w-])(?:${OUTSIDE.join("|")})\\.md\\b|/work/${"shared"}\\b`, "g");

/** `src/...`, `docs/...`, `test/...`, `scripts/...` paths; placeholders (`<x>`, `*`, `{a,b}`) are not paths. */
const REPO_PATH = /(?<![\w./-])(?:src|docs|test|scripts)\/[\w./<>*{},-]*/g;

function pathsIn(text: string): string[] {
  const out: string[] = [];
  for (const [m] of text.matchAll(REPO_PATH)) {
    if (/[<*{]/.test(m)) continue;
    out.push(m.replace(/[.,-]+$/, ""));
  }
  return out;
}

/** The comments of a TypeScript source (block and line comments; `//` inside a URL is not one). */
function comments(text: string): string {
  return [...text.matchAll(/\/\*[\s\S]*?\*\/|(?<![:"'`\w])\/\/[^\n]*/g)].map((m) => m[0]).join("\n");
}

/** Relative Markdown links of a docs page (`[text](other.md#part)`), resolved against its folder. */
function markdownLinks(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target) || target.startsWith("/")) continue;
    out.push(relative(ROOT, join(dirname(file), target)));
  }
  return out;
}

const docs = [...walk(join(ROOT, "docs"), (n) => n.endsWith(".md")), join(ROOT, "README.md")];
const sources = walk(join(ROOT, "src"), (n) => /\.(ts|sql)$/.test(n));

function dangling(): string[] {
  const out: string[] = [];
  for (const file of docs) {
    const text = readFileSync(file, "utf8");
    for (const p of [...pathsIn(text), ...markdownLinks(file, text)])
      if (!existsSync(join(ROOT, p))) out.push(`${relative(ROOT, file)}: ${p}`);
  }
  for (const file of sources) {
    const text = readFileSync(file, "utf8");
    for (const p of pathsIn(file.endsWith(".sql") ? text : comments(text)))
      if (!existsSync(join(ROOT, p))) out.push(`${relative(ROOT, file)}: ${p}`);
  }
  return [...new Set(out)].sort();
}

describe("doc links", () => {
  test("the scans find what they look for", () => {
    expect(
      pathsIn("see `src/lib/errors.ts`, src/providers/<x>/descriptor.ts and docs/scale-out.md."),
    ).toEqual(["src/lib/errors.ts", "docs/scale-out.md"]);
    expect(pathsIn("migrations in src/db/migrations/*.sql")).toEqual([]);
    expect(comments('const u = "https://x/src/a.ts"; // src/b.ts\n/** docs/c.md */')).toBe(
      "// src/b.ts\n/** docs/c.md */",
    );
    expect(markdownLinks(join(ROOT, "docs/a.md"), "[x](billing.md#email) [y](https://e.com/z.md)")).toEqual([
      "docs/billing.md",
    ]);
    expect(`see ${OUTSIDE[0]}.md`.match(OUTSIDE_NAME)).toHaveLength(1);
    expect("docs/console.md".match(OUTSIDE_NAME)).toBeNull();
  });

  test("every src/, docs/, test/ and scripts/ path named in docs/, README.md and src/ comments exists", () => {
    expect(docs.length).toBeGreaterThan(10);
    expect(sources.length).toBeGreaterThan(100);
    expect(dangling()).toEqual([]);
  });

  test("no file names a document that is not in the repository", () => {
    const named: string[] = [];
    const files = walk(ROOT, (n) => !/\.(png|jpe?g|webp|gif|ico|woff2?|lockb|sqlite|db|mp[34]|wav)$/.test(n));
    expect(files.length).toBeGreaterThan(200);
    for (const file of files) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        for (const m of line.matchAll(OUTSIDE_NAME)) named.push(`${relative(ROOT, file)}:${i + 1}: ${m[0]}`);
      });
    }
    expect(named).toEqual([]);
  });
});
