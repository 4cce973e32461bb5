import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  DEFERRED_ALLOWED,
  deferredLoadAllowed,
  deferredLoads,
  findCycles,
  type ImportGraph,
  importGraph,
  reachable,
} from "../../scripts/import-graph.ts";

const root = resolve(import.meta.dir, "../..");
const graph = importGraph(root);

/** Modules of the provider folders that the descriptors do not load: the adapters themselves. */
function adapterModules(): Set<string> {
  const descriptors = reachable(graph, ["src/providers/list.ts"]);
  return new Set([...graph.keys()].filter((m) => /^src\/providers\/[^/]+\//.test(m) && !descriptors.has(m)));
}

describe("the import graph of src/", () => {
  test("has no import cycle", () => {
    expect(findCycles(graph)).toEqual([]);
  });

  test("modules of src/ load later (require/import()) only packages, or a descriptor its own folder's", () => {
    const lazy = deferredLoads(root);
    expect([...lazy.keys()].filter((f) => DEFERRED_ALLOWED.test(f)).length).toBeGreaterThan(0);
    const stray = [...lazy].flatMap(([f, paths]) =>
      paths.filter((p) => !deferredLoadAllowed(f, p)).map((p) => `${f}: ${p}`),
    );
    expect(stray).toEqual([]);
    // The rule can fail: a deferred load of a module of src/ from elsewhere is refused.
    expect(deferredLoadAllowed("src/queue/submit.ts", "../chat/service.ts")).toBe(false);
    expect(deferredLoadAllowed("src/providers/fal/descriptor.ts", "../openai/chat.ts")).toBe(false);
    expect(deferredLoadAllowed("src/main.ts", "./app/start.ts")).toBe(false);
    expect(deferredLoadAllowed("src/providers/fal/descriptor.ts", "./index.ts")).toBe(true);
    expect(deferredLoadAllowed("src/payments/stripe.ts", "stripe")).toBe(true);
    expect(deferredLoadAllowed("src/payments/stripe.ts", "entry:stripe")).toBe(true);
    expect(deferredLoadAllowed("src/main.ts", "entry:cli")).toBe(true);
    expect(deferredLoadAllowed("src/app/start.ts", "entry:cli")).toBe(false);
    // The loads through importEntry are seen (the checks above cover them).
    expect(lazy.get("src/main.ts")).toEqual(["entry:cli"]);
    expect(lazy.get("src/payments/stripe.ts")).toContain("entry:stripe");
  });

  test("the adapters are known (the checks below can fail)", () => {
    const adapters = adapterModules();
    for (const m of [
      "src/providers/sandbox/provider.ts",
      "src/providers/sandbox/chat.ts",
      "src/providers/openai/media.ts",
      "src/providers/openai/chat.ts",
      "src/providers/fal/index.ts",
      "src/providers/replicate/index.ts",
      "src/providers/comfyui/provider.ts",
    ])
      expect(adapters.has(m)).toBe(true);
  });

  test("the CLI's operator commands load no provider adapter", () => {
    const entries = ["operator", "backup", "restore", "secret"].map((c) => `src/cli/${c}.ts`);
    for (const e of entries) expect(graph.has(e)).toBe(true);
    const loaded = reachable(graph, entries);
    expect([...loaded].filter((m) => adapterModules().has(m))).toEqual([]);
  });

  test("the catalog and the config schema load no provider adapter", () => {
    const loaded = reachable(graph, ["src/catalog/catalog.ts", "src/config/load.ts"]);
    expect(loaded.has("src/providers/list.ts")).toBe(true);
    expect([...loaded].filter((m) => adapterModules().has(m))).toEqual([]);
  });
});

describe("import-graph.ts", () => {
  test("finds every cycle, self-imports included", () => {
    const g: ImportGraph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
      ["e", ["e"]],
      ["f", ["a"]],
    ]);
    expect(findCycles(g)).toEqual([
      ["a", "b", "c", "a"],
      ["e", "e"],
    ]);
  });

  test("follows static imports and re-exports, not type-only imports nor deferred require/import()", () => {
    const dir = mkdtempSync(join(tmpdir(), "gengate-graph-"));
    try {
      mkdirSync(join(dir, "src/x"), { recursive: true });
      const files: Record<string, string> = {
        "src/a.ts": 'import { b } from "./x/b.ts";\nexport const a = b;\n',
        "src/x/b.ts": 'export { c as b } from "../c.ts";\n',
        "src/c.ts":
          'import type { A } from "./a.ts";\nimport { type B } from "./x/b.ts";\nexport const c = 1;\n' +
          'export const lazy = () => require("./d.ts");\nexport const later = () => import("./d.ts");\n' +
          "export type T = A | B;\n",
        "src/d.ts": 'import { a } from "./a.ts";\nexport const d = a;\n',
      };
      for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
      const g = importGraph(dir);
      expect(Object.fromEntries(g)).toEqual({
        "src/a.ts": ["src/x/b.ts"],
        "src/x/b.ts": ["src/c.ts"],
        "src/c.ts": [],
        "src/d.ts": ["src/a.ts"],
      });
      expect(findCycles(g)).toEqual([]);
      writeFileSync(join(dir, "src/c.ts"), 'import { a } from "./a.ts";\nexport const c = a;\n');
      expect(findCycles(importGraph(dir))).toEqual([["src/a.ts", "src/x/b.ts", "src/c.ts", "src/a.ts"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
