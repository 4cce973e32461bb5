// Entry point of the gengate binary. It must not export anything: with --bytecode, an entry that
// exports an object with .fetch would be auto-served by Bun (see STACK.md).
import { runCli } from "./cli/main.ts";

if (!process.env.NODE_ENV) process.env.NODE_ENV = "production";
const code = await runCli(process.argv.slice(2));
process.exit(code);
