/**
 * The import graph of src/ as Bun loads it, and its cycles. Usage:
 *   sh scripts/bunw scripts/import-graph.ts [ROOT]   # exit 1 and print every cycle under ROOT/src
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
import { readFileSync } from "node:fs";
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

/** The import cycles: one list of modules per strongly connected component (Tarjan), each as a loop. */
export function findCycles(graph: ImportGraph): string[][] {
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
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(loopThrough(graph, component));
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
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

if (import.meta.main) {
  const root = resolve(process.argv[2] ?? resolve(import.meta.dir, ".."));
  const graph = importGraph(root);
  const cycles = findCycles(graph);
  for (const c of cycles) console.error(`import cycle: ${c.join(" -> ")}`);
  const stray = [...deferredLoads(root)].flatMap(([f, paths]) =>
    paths.filter((p) => !deferredLoadAllowed(f, p)).map((p) => `${f}: ${p}`),
  );
  for (const f of stray) console.error(`${f}: a deferred require()/import() that could hide a cycle`);
  console.log(`import graph: ${graph.size} modules under src/, ${cycles.length} cycle(s)`);
  process.exit(cycles.length === 0 && stray.length === 0 ? 0 : 1);
}
