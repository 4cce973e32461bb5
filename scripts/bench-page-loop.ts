// The console bench's page loop in a process of its own (scripts/bench-console.ts): pages loaded one
// after another at one connection until stdin closes, then the count on stdout. Run apart from the
// submits' load loop so that reading ~100 KB pages never delays the submits' own answers in the
// generator (in one process the submits' p99 measured the generator's event loop as well).
// Usage: bun scripts/bench-page-loop.ts <base-url> <json [[path, headers], ...]>
export {};

const [base, list] = process.argv.slice(2) as [string, string];
const pages = JSON.parse(list) as [string, Record<string, string>][];
let loading = true;
let loaded = 0;
void (async () => {
  for await (const _ of Bun.stdin.stream()) {
    // Nothing is sent on stdin: it only ends.
  }
  loading = false;
})();
while (loading) {
  const [path, headers] = pages[loaded++ % pages.length]!;
  await (await fetch(`${base}${path}`, { headers })).arrayBuffer();
}
console.log(String(loaded));
process.exit(0);
