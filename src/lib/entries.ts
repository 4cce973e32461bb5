/**
 * Loads one of the binary's separate entry points (src/entries/): the program itself, which the
 * binary's small main module loads after deciding whether to re-execute (src/main.ts), and packages
 * that only some requests need: Stripe and SMTP (used by few installations), Ajv (model-input
 * submits), the QR code generator (two-factor set-up).
 *
 * Why not a plain dynamic import of the package: the bundler folds it into the main bundle, and
 * the binary loads the bytecode of that whole bundle at start whether or not a module ever runs.
 * Measured (issue 19, docs/performance.md): stripe and nodemailer, never run at start, cost 1.4 MB
 * of idle memory inside it. scripts/build compiles every file of src/entries/ as an entry point of
 * its own, embedded as /$bunfs/root/entries/<name>.js; the specifier is built at run time so the
 * bundler leaves it alone. From sources (tests, `bun src/main.ts`) the same file is imported as
 * TypeScript.
 *
 * Each entry is bundled with its own copy of every module it imports. The main module
 * (src/main.ts) and the program (entries/cli.ts) both hold this file and allocator.ts, neither of
 * which keeps state; a module with state (a cache, a class checked with instanceof) must live on
 * one side only.
 */
import { dirname } from "node:path";

export const ENTRY_NAMES = ["cli", "stripe", "nodemailer", "ajv", "qrcode-generator"] as const;
export type EntryName = (typeof ENTRY_NAMES)[number];

/**
 * Entry points that are worker scripts (run by src/lib/threads.ts in a thread of their own), never
 * imported: loading one on the main thread would install its message handler there.
 */
export const WORKER_NAMES = ["sandbox-media", "measure-file"] as const;
export type WorkerName = (typeof WORKER_NAMES)[number];

/** Whether this code runs from the compiled binary (its modules live under /$bunfs/), not from sources. */
export const COMPILED = import.meta.url.startsWith("file:///$bunfs/");

export function entryPath(name: EntryName | WorkerName): string {
  // Compiled, the entry point (Bun.main) is /$bunfs/root/<binary>, whichever bundle this code is in.
  return COMPILED ? `${dirname(Bun.main)}/entries/${name}.js` : `${import.meta.dir}/../entries/${name}.ts`;
}

export async function importEntry<T>(name: EntryName): Promise<T> {
  return (await import(entryPath(name))) as T;
}
