import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ENTRY_NAMES, entryPath, importEntry, WORKER_NAMES } from "../../src/lib/entries.ts";

// The binary's separate entry points (src/lib/entries.ts). That the compiled binary embeds and loads
// them is proven by the black-box mail tests and the browser Stripe checkout, run against it in CI.

const SRC = join(import.meta.dir, "../../src");

describe("separate entry points", () => {
  test("every file of src/entries is a named entry or worker script, and every name has its file", () => {
    const files = readdirSync(join(SRC, "entries"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => f.slice(0, -3))
      .sort();
    expect(files).toEqual([...ENTRY_NAMES, ...WORKER_NAMES].sort());
  });

  test.each([...ENTRY_NAMES])("%s loads from sources", async (name) => {
    expect(entryPath(name)).toEndWith(`/entries/${name}.ts`);
    const m = await importEntry<Record<string, unknown>>(name);
    // A package's entry re-exports it as the default; the program's exports runCli.
    const value = name === "cli" ? m.runCli : m.default;
    expect(["function", "object"]).toContain(typeof value);
  });

  test("a package's entry imports nothing of src/ (a deferred load of it cannot hide a cycle)", () => {
    const transpiler = new Bun.Transpiler({ loader: "ts" });
    for (const name of ENTRY_NAMES.filter((n) => n !== "cli")) {
      const imports = transpiler.scanImports(readFileSync(join(SRC, "entries", `${name}.ts`), "utf8"));
      expect(imports.map((i) => i.path)).toEqual([name]);
    }
  });

  test("no module imports an entry's package directly (the bundler would fold it into the main bundle)", () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, e.name);
        if (e.isDirectory()) walk(path);
        else if (e.name.endsWith(".ts") && !path.includes("/entries/")) {
          const text = readFileSync(path, "utf8");
          for (const name of ENTRY_NAMES) {
            // Type-only imports are erased; a value import (static or dynamic) is not.
            const value = new RegExp(
              `(^|\\n)import (?!type )[^;]*from "${name}"|import\\("${name}"\\)(?!\\[)`,
            );
            if (value.test(text.replace(/typeof import\("[^"]+"\)/g, ""))) offenders.push(`${path}: ${name}`);
          }
        }
      }
    };
    walk(SRC);
    expect(offenders).toEqual([]);
  });
});
