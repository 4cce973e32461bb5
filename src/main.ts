// Entry point of the gengate binary. It must not export anything: with --bytecode, an entry that
// exports an object with .fetch would be auto-served by Bun (see STACK.md).
import "./lib/production-mode.ts";
import { reexecWithAllocatorTuning } from "./server/allocator.ts";

// `serve` re-executes itself once with the allocator's options (src/server/allocator.ts). Done here,
// before the rest of the program is loaded (the dynamic import below), so the first life costs only
// the runtime's own start: spawn to the first 200 went from about 115-130 ms to about 90 ms.
if (process.argv[2] === "serve") reexecWithAllocatorTuning();
const { runCli } = await import("./cli/main.ts");
const code = await runCli(process.argv.slice(2));
process.exit(code);
