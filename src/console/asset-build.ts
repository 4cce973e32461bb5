/**
 * Builds the console's browser code and stylesheet (client/app.js with htmx and uPlot, client/console.css
 * with uPlot's CSS) with `bun build --minify`. It runs as a Bun macro (assets.ts imports it
 * `with { type: "macro" }`): under `bun run` / `bun test` it runs when assets.ts is loaded, and under
 * `bun build --compile` (scripts/build) it runs at build time and its result is inlined into the binary,
 * so all three ways gengate runs serve the same bundles and none needs a build step before it.
 * The bundler refuses Bun.build() inside a macro (it would wait for itself), hence the CLI in a child
 * process. Macro results must be plain data: strings only.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface BuiltAsset {
  /** Base name and extension; served as `/console/assets/<name>.<hash>.<ext>`. */
  name: string;
  ext: "js" | "css";
  text: string;
}

const ENTRIES: { file: string; name: string; ext: "js" | "css" }[] = [
  { file: "client/app.js", name: "app", ext: "js" },
  { file: "client/console.css", name: "console", ext: "css" },
];

export function buildConsoleAssets(): BuiltAsset[] {
  const out = mkdtempSync(join(tmpdir(), "gengate-console-assets-"));
  try {
    const result = Bun.spawnSync(
      [
        process.execPath,
        "build",
        ...ENTRIES.map((e) => join(import.meta.dir, e.file)),
        "--minify",
        "--target=browser",
        "--format=esm",
        `--outdir=${out}`,
        "--entry-naming=[name].[ext]",
      ],
      { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
    );
    if (result.exitCode !== 0) {
      throw new Error(
        `console assets: bun build failed: ${result.stderr.toString()}${result.stdout.toString()}`,
      );
    }
    return ENTRIES.map((e) => ({
      name: e.name,
      ext: e.ext,
      text: readFileSync(
        join(out, `${e.file.replace(/^client\//, "").replace(/\.[a-z]+$/, "")}.${e.ext}`),
        "utf8",
      ),
    }));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
