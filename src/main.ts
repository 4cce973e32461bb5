// Entry point of the gengate binary. It must not export anything: with --bytecode, an entry that
// exports an object with .fetch would be auto-served by Bun (see STACK.md).
import "./lib/production-mode.ts";
import { runCli } from "./cli/main.ts";

const code = await runCli(process.argv.slice(2));
process.exit(code);
