// Entry point of the gengate binary. It must not export anything: with --bytecode, an entry that
// exports an object with .fetch would be auto-served by Bun (docs/install.md "Build").
import "./lib/production-mode.ts";
import { importEntry } from "./lib/entries.ts";
import { reexecWithAllocatorTuning } from "./server/allocator.ts";

// `serve` re-executes itself once with the allocator's options (src/server/allocator.ts). Done here,
// before the rest of the program is loaded: the program is a separate entry point of the binary
// (src/entries/cli.ts), so the first life loads only this small module and the runtime.
if (process.argv[2] === "serve") reexecWithAllocatorTuning();
const { runCli } = await importEntry<typeof import("./entries/cli.ts")>("cli");
const code = await runCli(process.argv.slice(2));
process.exit(code);
