// What one billed chat call costs the server, seen from outside: the server's threads' CPU per call
// (/proc/PID/task/*/stat) and, with --frames, the WAL frames each transaction writes, by table and
// index (strace of the main thread's pwrite64 frame headers, mapped to pages through sqlite3's dbstat).
// docs/performance.md ("Issue 36: the money path's statements, one by one") has its figures.
//
// Usage: bun scripts/wal-frames.ts [--bin dist/gengate] [--calls 3000] [--connections 1] [--frames]
// --frames needs strace and the sqlite3 shell (Debian: apt install strace sqlite3); under strace
// each call is ~10x slower, so only the frame counts of that run mean anything, not its times.
import { cpSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chatConfig, gatewayChat, startGengate } from "./bench.ts";
import { startMockUpstream, work } from "./bench-proc.ts";

const { values } = parseArgs({
  options: {
    bin: { type: "string", default: "dist/gengate" },
    calls: { type: "string", default: "3000" },
    connections: { type: "string", default: "1" },
    frames: { type: "boolean", default: false },
  },
});
const calls = Number(values.calls);
const connections = Number(values.connections);

/** CPU time (ms) of each thread of `pid`, by "name#tid" (clock ticks of 10 ms). */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.set(`${name}#${tid}`, (Number(f[11]) + Number(f[12])) * 10);
  }
  return out;
}

const mock = await startMockUpstream();
const dataDir = join(work, "wal-frames");
const g = await startGengate(values.bin!, dataDir, chatConfig(mock.url));
const call = gatewayChat(g);
let failed = 0;
async function loop(n: number, lat: number[]) {
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await call();
    if (res.status !== 200) failed++;
    await res.arrayBuffer();
    lat.push(performance.now() - t);
  }
}
await Promise.all(Array.from({ length: connections }, () => loop(300, [])));

const tracer = values.frames
  ? Bun.spawn(
      [
        "strace",
        "-xx",
        "-s",
        "24",
        "-e",
        "trace=pwrite64",
        "-p",
        String(g.proc.pid),
        "-o",
        join(work, "strace.txt"),
      ],
      { stdout: "ignore", stderr: "ignore" },
    )
  : null;
if (tracer) await Bun.sleep(500); // strace attaches
const before = threadCpu(g.proc.pid);
const lat: number[] = [];
const t0 = performance.now();
await Promise.all(Array.from({ length: connections }, () => loop(Math.ceil(calls / connections), lat)));
const wall = performance.now() - t0;
const after = threadCpu(g.proc.pid);
if (tracer) {
  tracer.kill("SIGINT");
  await tracer.exited;
}
g.proc.kill("SIGTERM");
await g.proc.exited;
mock.proc.kill();

lat.sort((a, b) => a - b);
const n = lat.length;
console.log(
  `${n} calls at ${connections} connection(s), ${failed} not 200: ${((n / wall) * 1000).toFixed(0)} calls/s, ` +
    `p50 ${(lat[n >> 1]! * 1000).toFixed(0)} us`,
);
for (const [thread, ms] of after) {
  const used = ms - (before.get(thread) ?? 0);
  if (used > 0)
    console.log(`  ${thread.padEnd(24)} ${((used / n) * 1000).toFixed(0).padStart(5)} us CPU per call`);
}

if (tracer) {
  // The database's pages by table or index, read after the server stopped (its WAL checkpointed).
  const copy = join(work, "copy");
  cpSync(dataDir, copy, { recursive: true });
  const dbstat = Bun.spawnSync(["sqlite3", join(copy, "gengate.db"), "SELECT pageno, name FROM dbstat"]);
  const owner = new Map<number, string>();
  for (const line of dbstat.stdout.toString().split("\n")) {
    const [page, name] = line.split("|");
    if (page && name) owner.set(Number(page), name);
  }
  // A WAL frame is written as its 24-byte header (page number, then the database size in pages,
  // non-zero only on a transaction's last frame) and the page: one header per frame.
  const txs: number[][] = [];
  let current: number[] = [];
  for (const line of readFileSync(join(work, "strace.txt"), "utf8").split("\n")) {
    const m = /^pwrite64\(\d+, "((?:\\x[0-9a-f]{2}){24})", 24,/.exec(line);
    if (!m) continue;
    const b = Buffer.from(m[1]!.replaceAll("\\x", ""), "hex");
    current.push(b.readUInt32BE(0));
    if (b.readUInt32BE(4) !== 0) {
      txs.push(current);
      current = [];
    }
  }
  const frames = txs.reduce((s, t) => s + t.length, 0);
  console.log(`${txs.length} transactions, ${frames} WAL frames: ${(frames / n).toFixed(1)} per call`);
  // The commonest compositions: what each kind of transaction writes.
  const shapes = new Map<string, number>();
  for (const t of txs) {
    const byName = new Map<string, number>();
    for (const p of t)
      byName.set(owner.get(p) ?? "(freed or new)", (byName.get(owner.get(p) ?? "(freed or new)") ?? 0) + 1);
    const key = [...byName]
      .sort()
      .map(([k, v]) => (v > 1 ? `${k} x${v}` : k))
      .join(", ");
    shapes.set(`${t.length} frames: ${key}`, (shapes.get(`${t.length} frames: ${key}`) ?? 0) + 1);
  }
  for (const [shape, count] of [...shapes].sort((a, b) => b[1] - a[1]).slice(0, 4))
    console.log(`  ${count}x ${shape}`);
}
process.exit(0);
