// Loopback benchmark of the gengate binary against baselines measured in the same run: a bare
// Bun.serve hello world (for submits and status reads) and a bare Bun proxy (Bun.serve + fetch to
// the same mock upstream, no checks: the chat baseline).
// Usage: scripts/bench [--bin dist/gengate] [--compare dist/other] [--rounds N] [--seconds 5]
//                      [--connections 32] [--only queue,run,chat,idle-close,start,console] [--cold-start]
//                      [--requests 10000[,1000000]]
// --requests: the console phase's past requests, one data dir per size; with several, each
// endpoint's p50 at the bigger sizes against the first (scripts/bench-console.ts).
// --cold-start (root only) drops the page cache before each start measurement: idle RSS then
// counts the pages of the binary a start reads, not whatever of the file the cache happens to hold
// (the same binary idles at 64-70 MB depending on that; docs/performance.md, fourth pass).
// With --compare, every round runs both binaries one after the other (the order alternating
// between rounds) and the summary gives each figure's range per binary. It prints figures and
// ratios and asserts nothing (performance is not a test). The load functions are exported for
// scripts/bench-scale.ts; the run itself only starts when this file is the entry point.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import { closedLoop } from "./bench-load.ts";
import {
  children,
  rssMb,
  spawnAndWait,
  startBareProxy,
  startHelloWorld,
  startIdleUpstream,
  startMockUpstream,
  work,
} from "./bench-proc.ts";

export interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rss: number;
}

export interface LoadOptions {
  seconds: number;
  connections: number;
  /** Drop the page cache before the start phase (root only). */
  coldStart?: boolean;
  /** The console phase's history sizes (--requests). */
  requests?: number[];
}

/**
 * `connections` closed loops for `seconds`: each sends, awaits the full answer, records latency,
 * repeats. `pid` is the server whose peak RSS is sampled every 100 ms.
 */
export async function load(
  name: string,
  pid: number,
  make: (i: number) => Promise<Response>,
  opts: LoadOptions,
  ok = (r: Response) => r.ok,
): Promise<Result> {
  let rss = 0;
  const sampler = setInterval(() => (rss = Math.max(rss, rssMb(pid))), 100);
  const figures = await closedLoop(make, ok, opts.seconds, opts.connections);
  clearInterval(sampler);
  return { name, ...figures, rss };
}

export function row(r: Result, base?: Result, baseName = "baseline") {
  const ratio = base ? `  ${(r.rps / base.rps).toFixed(2)}x ${baseName}` : "";
  const rss = r.rss ? `  RSS max ${r.rss.toFixed(0)} MB` : "";
  console.log(
    `${r.name.padEnd(36)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(6)} ms  errors ${r.errors}${rss}${ratio}`,
  );
}

export interface Gengate {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  key: string;
  url: string;
}

/**
 * Starts `bin serve` on `dataDir` (port 0) with `config`; on a first start (not `again`) reads the
 * Default key it prints and credits its account $1,000,000 through the CLI.
 */
export async function startGengate(
  bin: string,
  dataDir: string,
  config: string,
  again = false,
): Promise<Gengate> {
  const configPath = join(work, `${Math.random()}.toml`);
  writeFileSync(configPath, config);
  const { proc, match } = await spawnAndWait(
    [bin, "serve", "--port", "0", "--data-dir", dataDir, "--config", configPath],
    // A first start prints the Default key; a restart only where it listens.
    again ? /"msg":"listening","url":"([^"]+)"/ : /Default API key[^:]*:\s+(gk_\w+)[\s\S]*?"url":"([^"]+)"/,
  );
  if (again) return { proc, key: "", url: match[1]! };
  const key = match[1]!;
  const url = match[2]!;
  const accounts = Bun.spawnSync([bin, "account", "list", "--json", "--data-dir", dataDir]);
  const id = (JSON.parse(accounts.stdout.toString()) as { data: { id: string }[] }).data[0]!.id;
  Bun.spawnSync([bin, "account", "credit", id, "1000000", "--data-dir", dataDir]);
  return { proc, key, url };
}

export const LIMITS = "[limits]\nwrites_per_minute = 1000000\nin_flight = 100000\nrun_wait_seconds = 60\n";

/** The gengate config routing model mock/bench to an OpenAI-compatible upstream. */
export function chatConfig(upstreamUrl: string): string {
  return `${LIMITS}[providers.mock]\ntype = "openai"\nbase_url = "${upstreamUrl}"\n[[models]]\nid = "mock/bench"\nkind = "text"\nprovider = "mock"\nupstream_model = "bench"\ninput_price_usd_micro = 1000000\noutput_price_usd_micro = 2000000\ncontext = 8192\n`;
}

const chatBody = JSON.stringify({
  model: "bench",
  messages: [{ role: "user", content: "Say hello." }],
  max_tokens: 16,
  stream: true,
});
const gatewayChatBody = JSON.stringify({
  model: "mock/bench",
  messages: [{ role: "user", content: "Say hello." }],
  max_tokens: 16,
});

/** A chat call (the upstream's own shape, streamed) to the upstream or the bare proxy. */
export function upstreamChat(url: string) {
  return () =>
    fetch(`${url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chatBody,
    });
}

/** A billed, non-streamed chat completion through gengate. */
export function gatewayChat(g: Gengate) {
  const headers = { authorization: `Bearer ${g.key}`, "content-type": "application/json" };
  return () => fetch(`${g.url}/v1/chat/completions`, { method: "POST", headers, body: gatewayChatBody });
}

/** Submits of sandbox jobs that sleep (workers take no CPU); collects up to 10,000 request ids. */
export function submitJob(g: Gengate, ids: string[]) {
  const headers = { authorization: `Key ${g.key}`, "content-type": "application/json" };
  const body = JSON.stringify({ prompt: "bench", sandbox: { delay_ms: 600000 } });
  return async () => {
    const res = await fetch(`${g.url}/v1/queue/sandbox/image`, { method: "POST", headers, body });
    if (res.status === 202 && ids.length < 10_000) {
      ids.push(((await res.clone().json()) as { request_id: string }).request_id);
    }
    return res;
  };
}

export function readStatus(g: Gengate, ids: string[]) {
  const headers = { authorization: `Key ${g.key}` };
  return (i: number) => fetch(`${g.url}/v1/requests/${ids[i % ids.length]}/status`, { headers });
}

/** A free loopback port (bound, then released). */
async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** Writes dirty pages out, then drops the page cache (needs root: /proc/sys/vm/drop_caches). */
function dropPageCache(): void {
  Bun.spawnSync(["sync"]);
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "3");
  } catch (err) {
    throw new Error(`--cold-start: cannot drop the page cache (root only): ${(err as Error).message}`);
  }
}

/** Spawn to the first 200 of /healthz on an existing data dir (polled every 1 ms), and idle RSS. */
export async function startup(
  bin: string,
  dataDir: string,
): Promise<{ ms: number; idleRss: number; idleAnon: number }> {
  const port = await freePort();
  const configPath = join(work, `${Math.random()}.toml`);
  writeFileSync(configPath, LIMITS);
  const t0 = performance.now();
  const proc = Bun.spawn(
    [bin, "serve", "--port", String(port), "--data-dir", dataDir, "--config", configPath],
    { stdout: "ignore", stderr: "ignore", stdin: "ignore" },
  );
  children.push(proc);
  let ms = -1;
  while (performance.now() - t0 < 20_000) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      await r.arrayBuffer();
      if (r.status === 200) {
        ms = performance.now() - t0;
        break;
      }
    } catch {
      // not listening yet
    }
    await Bun.sleep(1);
  }
  await Bun.sleep(2000); // idle: after start-up work settles
  const idleRss = rssMb(proc.pid);
  // The anonymous part does not depend on how much of the binary the page cache holds (the file
  // part varies by about 5 MB with it: docs/performance.md, third pass).
  const idleAnon = rssMb(proc.pid, "RssAnon");
  proc.kill("SIGKILL");
  await proc.exited;
  return { ms, idleRss, idleAnon };
}

/** One round of every phase for one binary: the named results and the derived figures. */
export interface Round {
  bin: string;
  results: Map<string, Result>;
  figures: Map<string, number>;
}

const PHASES = ["queue", "run", "chat", "idle-close", "start", "console"] as const;

export async function round(bin: string, only: Set<string>, opts: LoadOptions): Promise<Round> {
  const results = new Map<string, Result>();
  const figures = new Map<string, number>();
  const dir = mkdtempSync(join(work, "round-"));
  const put = (key: string, r: Result, base?: Result, baseName?: string) => {
    results.set(key, r);
    row(r, base, baseName);
  };
  const one = { ...opts, connections: 1 };

  if (only.has("queue") || only.has("run")) {
    const hello = await startHelloWorld();
    put("hello", await load("baseline: Bun.serve hello world", hello.proc.pid, () => fetch(hello.url), opts));
    hello.proc.kill();
  }
  const hello = results.get("hello");
  if (only.has("queue")) {
    const g = await startGengate(
      bin,
      join(dir, "queue"),
      `${LIMITS}[queue]\nconcurrency = { sandbox = 4 }\n`,
    );
    const ids: string[] = [];
    put(
      "submit",
      await load(
        "POST /v1/queue (durable reservation)",
        g.proc.pid,
        submitJob(g, ids),
        opts,
        (r) => r.status === 202,
      ),
      hello,
      "hello world",
    );
    put(
      "status",
      await load("GET /v1/requests/{id}/status", g.proc.pid, readStatus(g, ids), opts),
      hello,
      "hello world",
    );
    g.proc.kill("SIGKILL");
    figures.set("hello world req/s", hello!.rps);
    figures.set("submits/s", results.get("submit")!.rps);
    figures.set("status reads/s", results.get("status")!.rps);
    figures.set("submits / hello world", results.get("submit")!.rps / hello!.rps);
    figures.set("status reads / hello world", results.get("status")!.rps / hello!.rps);
  }
  if (only.has("run")) {
    // /run with zero-delay sandbox jobs (a 64x64 PNG each), from submit to output; 8 workers.
    const g = await startGengate(bin, join(dir, "run"), LIMITS);
    const headers = { authorization: `Key ${g.key}`, "content-type": "application/json" };
    const run = () =>
      fetch(`${g.url}/v1/run/sandbox/image`, {
        method: "POST",
        headers,
        body: '{"prompt":"bench","width":64,"height":64}',
      });
    put(
      "run",
      await load("POST /v1/run (sandbox job end to end)", g.proc.pid, run, opts, (r) => r.status === 200),
      hello,
      "hello world",
    );
    g.proc.kill("SIGKILL");
    figures.set("/run RSS max, MB", results.get("run")!.rss);
  }
  if (only.has("chat")) {
    const mock = await startMockUpstream();
    const proxy = await startBareProxy(mock.url);
    const g = await startGengate(bin, join(dir, "chat"), chatConfig(mock.url));
    const direct = upstreamChat(mock.url);
    const viaProxy = upstreamChat(proxy.url);
    const viaGateway = gatewayChat(g);
    put("up32", await load("chat: upstream directly", mock.proc.pid, direct, opts));
    put(
      "proxy32",
      await load("chat: bare Bun proxy", proxy.proc.pid, viaProxy, opts),
      results.get("up32"),
      "upstream",
    );
    put(
      "chat32",
      await load("chat: through gengate (billed)", g.proc.pid, viaGateway, opts),
      results.get("proxy32"),
      "bare proxy",
    );
    // Added latency is measured with one connection: under 32 the cores saturate and queueing dominates.
    put("up1", await load("chat: upstream directly, 1 conn", mock.proc.pid, direct, one));
    put("proxy1", await load("chat: bare Bun proxy, 1 conn", proxy.proc.pid, viaProxy, one));
    put("chat1", await load("chat: through gengate, 1 conn", g.proc.pid, viaGateway, one));
    for (const p of [g.proc, proxy.proc, mock.proc]) p.kill("SIGKILL");
    const r = (k: string) => results.get(k)!;
    figures.set("bare proxy req/s", r("proxy32").rps);
    figures.set("chat completions/s", r("chat32").rps);
    figures.set(
      `chat completions/s ${opts.connections} conns / bare proxy`,
      r("chat32").rps / r("proxy32").rps,
    );
    figures.set("chat added p50 at 1 conn, ms", r("chat1").p50 - r("up1").p50);
    figures.set("chat added p99 at 1 conn, ms", r("chat1").p99 - r("up1").p99);
    figures.set("chat p99 at 1 conn, ms", r("chat1").p99);
    figures.set("bare proxy added p50 at 1 conn, ms", r("proxy1").p50 - r("up1").p50);
    figures.set("chat RSS max, MB", Math.max(r("chat32").rss, r("chat1").rss));
  }
  if (only.has("idle-close")) {
    // Chat through gengate to an upstream that closes each keep-alive connection after 10 answers,
    // as the 11th call arrives (the race that failed 11-13 of ~31,000 calls): errors should be 0.
    const up = await startIdleUpstream();
    const g = await startGengate(bin, join(dir, "idle-close"), chatConfig(up.url));
    put("idle32", await load("chat: upstream closing idle conns", g.proc.pid, gatewayChat(g), opts));
    const stats = (await (await fetch(`${new URL(up.url).origin}/stats`)).json()) as { closedUnread: number };
    for (const p of [g.proc, up.proc]) p.kill("SIGKILL");
    figures.set("idle-close: connections closed as reused", stats.closedUnread);
    figures.set("idle-close: errors", results.get("idle32")!.errors);
  }
  for (const [key, r] of results) {
    if (["submit", "status", "run", "chat32", "chat1"].includes(key))
      figures.set(`p99/p50 ${r.name}`, r.p99 / r.p50);
  }
  if (only.has("start")) {
    // A data dir with a migrated database and a key (what a restart finds).
    const g = await startGengate(bin, join(dir, "start"), LIMITS);
    g.proc.kill("SIGKILL");
    await g.proc.exited;
    if (opts.coldStart) dropPageCache();
    const s = await startup(bin, join(dir, "start"));
    figures.set("spawn to first 200, ms", s.ms);
    figures.set("idle RSS, MB", s.idleRss);
    figures.set("idle RSS anonymous (heap), MB", s.idleAnon);
  }
  if (only.has("console")) {
    // Loaded here: scripts/bench-console.ts imports this file's helpers.
    const { consolePhase } = await import("./bench-console.ts");
    await consolePhase(bin, dir, { sizes: opts.requests ?? [10_000], seconds: opts.seconds });
  }
  console.log("");
  for (const [k, v] of figures) console.log(`  ${k.padEnd(56)} ${v.toFixed(2)}`);
  rmSync(dir, { recursive: true, force: true });
  return { bin, results, figures };
}

/** The figures of several rounds as min-max per binary, side by side. */
export function summary(rounds: Round[]) {
  const bins = [...new Set(rounds.map((r) => r.bin))];
  const keys = [...new Set(rounds.flatMap((r) => [...r.figures.keys()]))];
  const range = (bin: string, k: string) => {
    const v = rounds.filter((r) => r.bin === bin && r.figures.has(k)).map((r) => r.figures.get(k)!);
    if (v.length === 0) return "-";
    const lo = Math.min(...v);
    const hi = Math.max(...v);
    const f = (x: number) => x.toFixed(x >= 100 ? 0 : 2);
    return lo === hi ? f(lo) : `${f(lo)}-${f(hi)}`;
  };
  console.log(`\nSummary over ${rounds.length / bins.length} round(s) per binary (min-max):`);
  console.log(`  ${"figure".padEnd(56)} ${bins.map((b) => b.padStart(14)).join(" ")}`);
  for (const k of keys)
    console.log(`  ${k.padEnd(56)} ${bins.map((b) => range(b, k).padStart(14)).join(" ")}`);
}

/** "10000,1000000" (underscores allowed) as a list of positive integers. */
function parseSizes(text: string): number[] {
  const sizes = text.split(",").map((s) => Number(s.trim().replaceAll("_", "")));
  for (const n of sizes)
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--requests: bad size in ${text}`);
  return sizes;
}

async function main() {
  const { values } = parseArgs({
    options: {
      bin: { type: "string", default: "dist/gengate" },
      compare: { type: "string" },
      rounds: { type: "string" },
      seconds: { type: "string", default: "5" },
      connections: { type: "string", default: "32" },
      only: { type: "string" },
      "cold-start": { type: "boolean", default: false },
      requests: { type: "string", default: "10000" },
    },
  });
  const opts = {
    seconds: Number(values.seconds),
    connections: Number(values.connections),
    coldStart: values["cold-start"],
    requests: parseSizes(values.requests!),
  };
  const bins = values.compare ? [values.bin!, values.compare] : [values.bin!];
  const rounds = Number(values.rounds ?? (values.compare ? 2 : 1));
  // The console phase writes --requests requests first: only by default when one binary runs once.
  const only = new Set(
    values.only
      ? values.only.split(",")
      : PHASES.filter((p) => p !== "console" || (bins.length === 1 && rounds === 1)),
  );
  for (const p of only)
    if (!(PHASES as readonly string[]).includes(p)) throw new Error(`--only: unknown phase ${p}`);
  console.log(
    `gengate bench: ${opts.connections} connections, ${opts.seconds} s per phase, loopback, load generator on the same machine (${navigator.hardwareConcurrency} cores)`,
  );
  const done: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    // Alternate the order between rounds so drift in the machine's speed hits both binaries alike.
    for (const bin of i % 2 === 0 ? bins : [...bins].reverse()) {
      console.log(`\n== round ${i + 1}/${rounds}: ${bin}`);
      done.push(await round(bin, only, opts));
    }
  }
  if (done.length > 1) summary(done);
  process.exit(0);
}

if (import.meta.main) await main();
