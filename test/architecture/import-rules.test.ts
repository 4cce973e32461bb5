import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import {
  compareWithBaseline,
  folderCycles,
  folderEdges,
  formatBaseline,
  type ImportGraph,
  importGraph,
  layersOf,
  readBaseline,
  storeModules,
  upwardImports,
  type Violations,
  violations,
  wiringImports,
} from "../../scripts/import-graph.ts";

const root = resolve(import.meta.dir, "../..");
const graph = importGraph(root);
const stores = storeModules(root);

const none: Violations = { foldersInCycles: [], upwardImports: [], wiringImports: [] };

describe("the folder and layer rules on small graphs (each can fail)", () => {
  test("a folder cycle: two folders importing each other, with no file-level cycle", () => {
    const g: ImportGraph = new Map([
      ["src/a/x.ts", ["src/b/y.ts"]],
      ["src/b/y.ts", ["src/a/z.ts"]],
      ["src/a/z.ts", []],
      ["src/c/w.ts", ["src/a/x.ts"]],
    ]);
    expect(folderCycles(g)).toEqual([["a", "b"]]);
    expect(folderEdges(g).get("b -> a")).toEqual(["src/b/y.ts -> src/a/z.ts"]);
    const found = violations(g, new Set());
    expect(found.foldersInCycles).toEqual(["a", "b"]);
    expect(compareWithBaseline(found, none)).toEqual({
      added: ["foldersInCycles: a", "foldersInCycles: b"],
      fixed: [],
    });
    // A new folder joining a cycle the baseline knows is new too.
    g.set("src/a/z.ts", ["src/c/w.ts"]);
    expect(
      compareWithBaseline(violations(g, new Set()), { ...none, foldersInCycles: ["a", "b"] }).added,
    ).toEqual(["foldersInCycles: c"]);
  });

  test("an upward import: lib -> db, store -> service, service -> HTTP kit, kit -> route", () => {
    const g: ImportGraph = new Map([
      ["src/lib/x.ts", ["src/db/sql.ts"]],
      ["src/db/sql.ts", []],
      ["src/fx/rates.ts", ["src/fx/refresh.ts", "src/pricing/fx.ts", "src/db/sql.ts"]],
      ["src/fx/refresh.ts", ["src/db/sql.ts"]],
      ["src/pricing/fx.ts", ["src/lib/errors.ts"]],
      ["src/lib/errors.ts", []],
      ["src/chat/wire.ts", ["src/http/errors.ts", "src/fx/rates.ts"]],
      ["src/http/errors.ts", ["src/queue/http.ts"]],
      ["src/queue/http.ts", ["src/chat/wire.ts"]],
    ]);
    const layers = layersOf(g, new Set(["src/fx/rates.ts"]));
    expect(Object.fromEntries(layers)).toEqual({
      "src/lib/x.ts": "lib",
      "src/db/sql.ts": "db",
      "src/fx/rates.ts": "stores",
      "src/fx/refresh.ts": "services",
      "src/pricing/fx.ts": "pure",
      "src/lib/errors.ts": "lib",
      "src/chat/wire.ts": "services",
      "src/http/errors.ts": "http kit",
      "src/queue/http.ts": "routes",
    });
    // The store's import of a pure module is allowed; the one of a service is not.
    expect(
      upwardImports(g, layers).map((u) => `${u.fromLayer} -> ${u.toLayer}: ${u.from} -> ${u.to}`),
    ).toEqual([
      "services -> http kit: src/chat/wire.ts -> src/http/errors.ts",
      "stores -> services: src/fx/rates.ts -> src/fx/refresh.ts",
      "http kit -> routes: src/http/errors.ts -> src/queue/http.ts",
      "lib -> db: src/lib/x.ts -> src/db/sql.ts",
    ]);
    const found = violations(g, new Set(["src/fx/rates.ts"]));
    const baseline = { ...none, foldersInCycles: found.foldersInCycles };
    expect(compareWithBaseline(found, baseline).added).toEqual([
      "upwardImports: src/chat/wire.ts -> src/http/errors.ts",
      "upwardImports: src/fx/rates.ts -> src/fx/refresh.ts",
      "upwardImports: src/http/errors.ts -> src/queue/http.ts",
      "upwardImports: src/lib/x.ts -> src/db/sql.ts",
    ]);
  });

  test("the wiring is imported only by the entry points and by itself", () => {
    const g: ImportGraph = new Map([
      ["src/main.ts", []],
      ["src/cli/serve.ts", ["src/app/start.ts"]],
      ["src/app/start.ts", ["src/app/app-context.ts", "src/app/app.ts"]],
      ["src/app/app-context.ts", ["src/app/queue-services.ts"]],
      ["src/queue/submit.ts", ["src/app/queue-services.ts"]],
      ["src/app/app.ts", []],
      ["src/app/queue-services.ts", []],
    ]);
    expect(wiringImports(g)).toEqual(["src/queue/submit.ts -> src/app/queue-services.ts"]);
    expect(compareWithBaseline(violations(g, new Set()), none).added).toContain(
      "wiringImports: src/queue/submit.ts -> src/app/queue-services.ts",
    );
  });

  test("a baseline entry that no longer occurs fails too (the baseline only shrinks)", () => {
    const found: Violations = { foldersInCycles: ["a", "b"], upwardImports: [], wiringImports: [] };
    const baseline: Violations = {
      foldersInCycles: ["a", "b", "c"],
      upwardImports: ["src/chat/wire.ts -> src/http/errors.ts"],
      wiringImports: [],
    };
    expect(compareWithBaseline(found, baseline)).toEqual({
      added: [],
      fixed: ["foldersInCycles: c", "upwardImports: src/chat/wire.ts -> src/http/errors.ts"],
    });
  });

  test("the script exits 1 and says which entries to remove, or which violation is new", () => {
    const dir = mkdtempSync(join(tmpdir(), "gengate-rules-"));
    const write = (f: string, text: string) => {
      mkdirSync(dirname(join(dir, f)), { recursive: true });
      writeFileSync(join(dir, f), text);
    };
    const run = () => {
      const p = Bun.spawnSync([process.execPath, join(root, "scripts/import-graph.ts"), dir]);
      return { code: p.exitCode, out: `${p.stdout}${p.stderr}` };
    };
    try {
      write("src/a/x.ts", 'import { y } from "../b/y.ts";\nexport const x = y;\n');
      write("src/b/y.ts", 'import { z } from "../a/z.ts";\nexport const y = z;\n');
      write("src/a/z.ts", "export const z = 1;\n");
      const baseline = { ...none, foldersInCycles: ["a", "b"] };
      write("scripts/import-baseline.json", formatBaseline(baseline));
      expect(run()).toMatchObject({ code: 0 });
      write(
        "scripts/import-baseline.json",
        formatBaseline({ ...baseline, upwardImports: ["src/a/x.ts -> src/b/y.ts"] }),
      );
      const fixed = run();
      expect(fixed.code).toBe(1);
      expect(fixed.out).toContain("remove 1 fixed entries from scripts/import-baseline.json:");
      expect(fixed.out).toContain("upwardImports: src/a/x.ts -> src/b/y.ts");
      write("scripts/import-baseline.json", formatBaseline(none));
      const added = run();
      expect(added.code).toBe(1);
      expect(added.out).toContain("new violation, not in scripts/import-baseline.json: foldersInCycles: a");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the folder and layer rules on src/", () => {
  test("hold with the baseline: nothing new, nothing fixed but still listed", () => {
    expect(compareWithBaseline(violations(graph, stores), readBaseline(root))).toEqual({
      added: [],
      fixed: [],
    });
  });

  test("the layers are the documented ones (spot checks)", () => {
    const layers = layersOf(graph, stores);
    const expected: Record<string, string> = {
      "src/app/app-context.ts": "wiring",
      "src/cli/serve.ts": "wiring",
      "src/queue/http.ts": "routes",
      "src/files/outputs-http.ts": "routes",
      "src/console/keys-pages.ts": "routes",
      "src/health/http.ts": "routes",
      "src/http/errors.ts": "http kit",
      "src/auth/authenticate.ts": "http kit",
      "src/queue/submit.ts": "services",
      "src/queue/job-store.ts": "stores",
      "src/ledger/ledger.ts": "stores",
      "src/ledger/month.ts": "pure",
      "src/db/sql.ts": "db",
      "src/lib/errors.ts": "lib",
    };
    for (const [m, l] of Object.entries(expected)) expect(`${m}: ${layers.get(m)}`).toBe(`${m}: ${l}`);
    // Stores are found by their class (`extends SqlStore`), so a store moved or split stays one.
    for (const m of ["src/accounts/store.ts", "src/people/store.ts", "src/alerts/alerts.ts"])
      expect(stores.has(m)).toBe(true);
  });

  test("the baseline file is as --write-baseline writes it (biome's JSON format)", () => {
    expect(formatBaseline(readBaseline(root))).toBe(
      readFileSync(join(root, "scripts/import-baseline.json"), "utf8"),
    );
  });
});
