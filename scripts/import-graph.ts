/**
 * The import graph of src/ as Bun loads it, its cycles, and the folder and layer rules. Usage:
 *   sh scripts/bunw scripts/import-graph.ts [ROOT] [--edges] [--write-baseline]
 * exits 1 on any import cycle under ROOT/src, on a stray deferred load, and on any violation of the
 * folder and layer rules that differs from the baseline (scripts/import-baseline.json), new or fixed.
 * `--edges` lists the folder edges of each folder cycle and the imports behind them; `--write-baseline`
 * rewrites the baseline with today's violations (after a merge of moved code).
 *
 * Edges are the imports Bun's own transpiler reports (`Bun.Transpiler.scanImports`), so the graph is
 * the runtime's view with no dependency to install: type-only imports (`import type`, `{ type X }`)
 * are erased and are not edges. Only static imports and re-exports count: they run when the module
 * loads, which is where a cycle bites (a class or constant read before its module finished). A
 * `require()` or `import()` inside a function (a provider descriptor's `create`) runs later and is
 * not an edge; such deferred loads are allowed only where they cannot hide a cycle (checked here too,
 * `deferredLoadAllowed`). Only relative imports of .ts files are followed (packages and .sql assets
 * are leaves).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

const transpiler = new Bun.Transpiler({ loader: "ts" });

/** `importEntry<...>("name")`: a load of the binary's entry point src/entries/<name>.ts. */
const ENTRY_LOAD = /\bimportEntry\s*(?:<.*?>)?\s*\(\s*"([^"]+)"/g;

/** Provider descriptors load their adapter (a module of their own folder) in `create`. */
export const DEFERRED_ALLOWED = /^src\/providers\/[^/]+\/descriptor\.ts$/;

/**
 * The deferred loads that cannot hide a cycle in src/: a provider descriptor's of its own folder's
 * modules; anyone's of a package (a library loaded at first use, for start time and memory); and the
 * binary's separate entry points (`importEntry("<name>")`, reported as `entry:<name>`, src/lib/entries.ts):
 * a package's (src/entries/stripe.ts, nodemailer.ts, which import nothing of src/) from anywhere, the
 * program's (src/entries/cli.ts) only from the entry point src/main.ts, which no module imports (it loads
 * the program after `serve`'s re-execution, docs/performance.md).
 */
export function deferredLoadAllowed(file: string, path: string): boolean {
  if (path === "entry:cli") return file === "src/main.ts";
  if (!path.startsWith(".")) return true;
  return DEFERRED_ALLOWED.test(file) && /^\.\/[^/]+\.ts$/.test(path);
}

/** Module (path relative to `root`) -> the modules it imports statically. */
export type ImportGraph = Map<string, string[]>;

export function importGraph(root: string, dir = "src"): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of new Bun.Glob(`${dir}/**/*.ts`).scanSync({ cwd: root })) {
    if (file.endsWith(".d.ts")) continue;
    const imports = transpiler.scanImports(readFileSync(resolve(root, file), "utf8"));
    const targets = imports
      .filter((i) => i.kind === "import-statement" && i.path.startsWith(".") && i.path.endsWith(".ts"))
      .map((i) => relative(root, resolve(root, dirname(file), i.path)));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * The modules that load others later (`require()` or `import()`): only provider descriptors may
 * (their `create`), so a deferred load cannot hide a cycle anywhere else.
 */
export function deferredLoads(root: string, dir = "src"): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of new Bun.Glob(`${dir}/**/*.ts`).scanSync({ cwd: root })) {
    if (file.endsWith(".d.ts")) continue;
    const text = readFileSync(resolve(root, file), "utf8");
    const lazy = transpiler
      .scanImports(text)
      .filter((i) => i.kind === "require-call" || i.kind === "dynamic-import")
      .map((i) => i.path);
    for (const m of text.matchAll(ENTRY_LOAD)) lazy.push(`entry:${m[1]}`);
    if (lazy.length > 0) out.set(file, lazy);
  }
  return out;
}

/** Every module loaded (statically) by loading `entries`, the entries included. */
export function reachable(graph: ImportGraph, entries: string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...entries];
  while (stack.length > 0) {
    const m = stack.pop()!;
    if (seen.has(m)) continue;
    seen.add(m);
    stack.push(...(graph.get(m) ?? []));
  }
  return seen;
}

/** The strongly connected components of `graph` (Tarjan), in the order they complete, singletons included. */
export function components(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    out.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** The import cycles: one list of modules per strongly connected component, each as a loop. */
export function findCycles(graph: ImportGraph): string[][] {
  return components(graph)
    .filter((c) => c.length > 1 || (graph.get(c[0]!) ?? []).includes(c[0]!))
    .map((c) => loopThrough(graph, c));
}

/** One concrete loop a -> b -> ... -> a inside a strongly connected component. */
function loopThrough(graph: ImportGraph, component: string[]): string[] {
  const inside = new Set(component);
  const start = [...component].sort()[0]!;
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [v];
        for (let p = v; p !== start; ) {
          p = from.get(p)!;
          path.unshift(p);
        }
        return [...path, start];
      }
      if (!from.has(w) && w !== start) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...component, start];
}

// ---------------------------------------------------------------------------------------------
// Folder and layer rules (docs/architecture.md "Import rules"). Measured over the same static graph.

/**
 * The layers, top to bottom: a module may import its own layer and any layer below it, never one
 * above. `pure` modules are derived, not listed: a module that would be a service but imports (at run time)
 * nothing but `lib` and other pure modules: domain code that a store may use (`src/ledger/month.ts`,
 * `src/pricing/fx.ts`), as a service may. Six store -> module imports of today are such; deriving the
 * layer keeps them out of the baseline, while a store importing a real service still counts.
 */
export const LAYERS = ["wiring", "routes", "http kit", "services", "stores", "pure", "db", "lib"] as const;
export type Layer = (typeof LAYERS)[number];

/**
 * The one wiring: the modules that build and start everything, all in src/app/ (createApp, the services,
 * the app context, start-up, the background loops). Nothing under src/ imports them but the entry points
 * and the wiring itself (`wiringImports`).
 */
export const WIRING_MODULES = [
  "src/app/app.ts",
  "src/app/app-context.ts",
  "src/app/background.ts",
  "src/app/queue-services.ts",
  "src/app/services.ts",
  "src/app/start.ts",
];

/** The entry points: src/main.ts, the binary's separate entries (src/entries/) and the CLI's commands. */
export const ENTRY_POINTS = /^src\/(main\.ts$|entries\/|cli\/)/;

/**
 * Module path -> layer, first match wins; what no rule names is a store if it declares a class extending
 * `SqlStore` (`src/db/store.ts`, `storeModules`), else a service (or pure, above). The entry points sit with the wiring at the top. HTTP modules are
 * named by suffix (`http.ts`, `*-http.ts`, `*-pages.ts`; docs/architecture.md "Names"); outbound clients are
 * `client.ts` / `*-client.ts`, services. The HTTP kit is what route modules share:
 * src/http/, key authentication (src/auth/), each domain's request
 * schemas and OpenAPI text (`schemas.ts`, `openapi.ts`). The web console and the docs pages are routes.
 */
export const LAYER_RULES: readonly [Layer, RegExp | string[]][] = [
  ["wiring", ENTRY_POINTS],
  ["wiring", WIRING_MODULES],
  ["lib", /^src\/lib\//],
  ["db", /^src\/db\//],
  ["routes", /^src\/(console|docs)\//],
  ["http kit", /^src\/(http|auth)\//],
  ["routes", /^src\/[^/]+\/([^/]*-)?(http|pages)\.ts$/],
  ["http kit", /^src\/[^/]+\/(schemas|openapi)\.ts$/],
];

const STORE_CLASS = /\bclass\s+\w+(?:<[^>]*>)?\s+extends\s+SqlStore\b/;

/** The modules that declare a store (a class extending `SqlStore`). */
export function storeModules(root: string, dir = "src"): Set<string> {
  const out = new Set<string>();
  for (const file of new Bun.Glob(`${dir}/**/*.ts`).scanSync({ cwd: root }))
    if (!file.endsWith(".d.ts") && STORE_CLASS.test(readFileSync(resolve(root, file), "utf8"))) out.add(file);
  return out;
}

/** Every module's layer (`LAYER_RULES`, then stores, services and the pure modules derived from the graph). */
export function layersOf(graph: ImportGraph, stores: Set<string>): Map<string, Layer> {
  const layers = new Map<string, Layer>();
  for (const m of graph.keys())
    layers.set(
      m,
      LAYER_RULES.find(([, rule]) => (Array.isArray(rule) ? rule.includes(m) : rule.test(m)))?.[0] ??
        (stores.has(m) ? "stores" : "services"),
    );
  // Pure modules: the largest set of services whose imports are all lib or pure (remove until stable).
  const pure = new Set([...layers].filter(([, l]) => l === "services").map(([m]) => m));
  for (let changed = true; changed; ) {
    changed = false;
    for (const m of pure)
      if ((graph.get(m) ?? []).some((t) => layers.get(t) !== "lib" && !pure.has(t))) {
        pure.delete(m);
        changed = true;
      }
  }
  for (const m of pure) layers.set(m, "pure");
  return layers;
}

/** The top-level folder of a module under src/ (`src/queue/http.ts` -> `queue`; `src/main.ts` -> `main.ts`). */
export function folderOf(module: string): string {
  return module.split("/")[1] ?? module;
}

/** Folder -> the other folders its modules import. */
export function folderGraph(graph: ImportGraph): ImportGraph {
  const out: ImportGraph = new Map();
  for (const [m, targets] of graph) {
    const from = folderOf(m);
    const to = new Set(out.get(from));
    for (const t of targets) if (folderOf(t) !== from) to.add(folderOf(t));
    out.set(from, [...to].sort());
  }
  return out;
}

/** `from -> to` folder edge -> the imports behind it (`src/a/x.ts -> src/b/y.ts`), sorted. */
export function folderEdges(graph: ImportGraph): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [m, targets] of graph)
    for (const t of targets) {
      if (folderOf(t) === folderOf(m)) continue;
      const edge = `${folderOf(m)} -> ${folderOf(t)}`;
      out.set(edge, [...(out.get(edge) ?? []), `${m} -> ${t}`]);
    }
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)).map(([e, i]) => [e, i.sort()]));
}

/** The folder cycles: each strongly connected set of folders, sorted, largest first. */
export function folderCycles(graph: ImportGraph): string[][] {
  return components(folderGraph(graph))
    .filter((c) => c.length > 1)
    .map((c) => c.sort())
    .sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

/** An import that runs back up the layers, `from -> to`. */
export interface UpwardImport {
  from: string;
  to: string;
  fromLayer: Layer;
  toLayer: Layer;
}

/** The imports of a module from a layer above its own (`LAYERS`), sorted. */
export function upwardImports(graph: ImportGraph, layers: Map<string, Layer>): UpwardImport[] {
  const rank = (l: Layer) => LAYERS.indexOf(l);
  const out: UpwardImport[] = [];
  for (const [from, targets] of graph)
    for (const to of targets) {
      const fromLayer = layers.get(from);
      const toLayer = layers.get(to);
      if (fromLayer && toLayer && rank(toLayer) < rank(fromLayer)) out.push({ from, to, fromLayer, toLayer });
    }
  return out.sort((a, b) => `${a.from} ${a.to}`.localeCompare(`${b.from} ${b.to}`));
}

/** The imports of a wiring module by any module but an entry point or another wiring module, `from -> to`. */
export function wiringImports(graph: ImportGraph, wiring = WIRING_MODULES): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets)
      if (wiring.includes(to) && !wiring.includes(from) && !ENTRY_POINTS.test(from))
        out.push(`${from} -> ${to}`);
  return out.sort();
}

/**
 * The violations the baseline may list: folders in a cycle, upward imports and imports of the wiring.
 * CI fails on any violation not in the baseline and on any baseline entry that no longer occurs, so the
 * baseline only shrinks (`--write-baseline` rewrites it, for a merge of moved code).
 */
export interface Violations {
  foldersInCycles: string[];
  upwardImports: string[];
  wiringImports: string[];
}

export function violations(graph: ImportGraph, stores: Set<string>): Violations {
  return {
    foldersInCycles: folderCycles(graph).flat().sort(),
    upwardImports: upwardImports(graph, layersOf(graph, stores)).map((u) => `${u.from} -> ${u.to}`),
    wiringImports: wiringImports(graph),
  };
}

/** What differs from the baseline: `added` fails CI (a new violation), `fixed` too (remove the entry). */
export function compareWithBaseline(
  now: Violations,
  baseline: Violations,
): { added: string[]; fixed: string[] } {
  const added: string[] = [];
  const fixed: string[] = [];
  for (const key of ["foldersInCycles", "upwardImports", "wiringImports"] as const) {
    const was = new Set(baseline[key]);
    const is = new Set(now[key]);
    for (const v of is) if (!was.has(v)) added.push(`${key}: ${v}`);
    for (const v of was) if (!is.has(v)) fixed.push(`${key}: ${v}`);
  }
  return { added, fixed };
}

export const BASELINE_FILE = "scripts/import-baseline.json";

const BASELINE_ABOUT =
  "Today's violations of the folder and layer rules, which CI tolerates (scripts/import-graph.ts, " +
  "docs/architecture.md 'Import rules'). Only shrinks: remove an entry once fixed; a new violation fails CI. " +
  "Regenerate with: sh scripts/bunw scripts/import-graph.ts --write-baseline";

export function readBaseline(root: string): Violations {
  const raw = JSON.parse(readFileSync(resolve(root, BASELINE_FILE), "utf8")) as Partial<Violations>;
  return {
    foldersInCycles: raw.foldersInCycles ?? [],
    upwardImports: raw.upwardImports ?? [],
    wiringImports: raw.wiringImports ?? [],
  };
}

/** The baseline as biome formats JSON (line width 110: an array on one line when it fits), so `biome ci` passes. */
export function formatBaseline(v: Violations): string {
  const keys = Object.keys(v) as (keyof Violations)[];
  const fields = keys.map((key, n) => {
    const comma = n < keys.length - 1 ? "," : "";
    const items = v[key].map((s) => JSON.stringify(s));
    const line = `  "${key}": [${items.join(", ")}]${comma}`;
    if (line.length <= 110) return line;
    return `  "${key}": [\n${items.map((s) => `    ${s}`).join(",\n")}\n  ]${comma}`;
  });
  return `{\n  "about": ${JSON.stringify(BASELINE_ABOUT)},\n${fields.join("\n")}\n}\n`;
}

export function writeBaseline(root: string, v: Violations): void {
  writeFileSync(resolve(root, BASELINE_FILE), formatBaseline(v));
}

/** Prints the figures of the folder and layer rules and what differs from the baseline; false on a difference. */
function reportRules(root: string, graph: ImportGraph, write: boolean, edges: boolean): boolean {
  const stores = storeModules(root);
  const cycles = folderCycles(graph);
  const folders = [...folderGraph(graph).keys()].filter((f) => !f.endsWith(".ts")).length;
  const layers = layersOf(graph, stores);
  const upward = upwardImports(graph, layers);
  const count = (l: Layer) => [...layers.values()].filter((x) => x === l).length;
  const now = violations(graph, stores);
  console.log(`folders: ${folders} under src/, ${cycles.length} folder cycle(s)`);
  for (const c of cycles) {
    console.log(`  folder cycle of ${c.length}: ${c.join(" ")}`);
    // Its folder edges and the imports behind each: a cycle breaks when one edge's imports go.
    if (!edges) continue;
    for (const [edge, imports] of folderEdges(graph))
      if (c.includes(edge.split(" -> ")[0]!) && c.includes(edge.split(" -> ")[1]!))
        console.log(`    ${edge} (${imports.length}): ${imports.join(", ")}`);
  }
  console.log(`layers, top to bottom (modules): ${LAYERS.map((l) => `${l} (${count(l)})`).join(" > ")}`);
  console.log(`upward imports: ${upward.length}`);
  for (const u of upward) console.log(`  ${u.fromLayer} -> ${u.toLayer}: ${u.from} -> ${u.to}`);
  console.log(`imports of the wiring outside the entry points: ${now.wiringImports.length}`);
  for (const w of now.wiringImports) console.log(`  ${w}`);
  if (write) {
    writeBaseline(root, now);
    console.log(`wrote ${BASELINE_FILE}`);
    return true;
  }
  const { added, fixed } = compareWithBaseline(now, readBaseline(root));
  for (const a of added) console.error(`new violation, not in ${BASELINE_FILE}: ${a}`);
  if (fixed.length > 0) console.error(`remove ${fixed.length} fixed entries from ${BASELINE_FILE}:`);
  for (const f of fixed) console.error(`  ${f}`);
  const total = Object.values(now).flat().length;
  console.log(`baseline: ${total} violation(s), ${added.length} new, ${fixed.length} fixed`);
  return added.length === 0 && fixed.length === 0;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const write = args.includes("--write-baseline");
  const root = resolve(args.find((a) => !a.startsWith("--")) ?? resolve(import.meta.dir, ".."));
  const graph = importGraph(root);
  const cycles = findCycles(graph);
  for (const c of cycles) console.error(`import cycle: ${c.join(" -> ")}`);
  const stray = [...deferredLoads(root)].flatMap(([f, paths]) =>
    paths.filter((p) => !deferredLoadAllowed(f, p)).map((p) => `${f}: ${p}`),
  );
  for (const f of stray) console.error(`${f}: a deferred require()/import() that could hide a cycle`);
  console.log(`import graph: ${graph.size} modules under src/, ${cycles.length} cycle(s)`);
  const rulesHold = reportRules(root, graph, write, args.includes("--edges"));
  process.exit(cycles.length === 0 && stray.length === 0 && rulesHold ? 0 : 1);
}
