// The program itself (every command, the server) as a separate entry point of the binary
// (scripts/build): `serve` re-executes itself once at start (src/main.ts, src/server/allocator.ts), and
// its first life then loads only the small entry module, not the whole program's bytecode.
export { runCli } from "../cli/main.ts";
