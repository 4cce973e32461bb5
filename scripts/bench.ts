// Loopback benchmark of the gengate binary against a bare Bun.serve baseline, in one run.
// Usage: scripts/bench [--bin dist/gengate] [--seconds 5] [--connections 32] [--only console]
// Prints figures and ratios; it asserts nothing (performance is not a test).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import { closedLoop } from "./bench-load.ts";

const { values } = parseArgs({
  options: {
    bin: { type: "string", default: "dist/gengate" },
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    only: { type: "string" },
  },
});
const SECONDS = Number(values.seconds);
const CONNS = Number(values.connections);
const work = mkdtempSync(join(tmpdir(), "gengate-bench-"));
const children: Subprocess[] = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

async function spawnAndWait(
  cmd: string[],
  pattern: RegExp,
): Promise<{ proc: Subprocess<"ignore", "pipe", "pipe">; match: RegExpExecArray }> {
  const proc = Bun.spawn(cmd, {
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  children.push(proc);
  let out = "";
  const reader = proc.stdout.getReader();
  const deadline = Date.now() + 20_000;
  const timeout = setTimeout(() => proc.kill(), 20_000); // ends a silent child, so read() returns done
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
    const m = pattern.exec(out);
    if (m) {
      clearTimeout(timeout);
      // Keep draining stdout so the child never blocks on a full pipe.
      void (async () => {
        for (;;) if ((await reader.read()).done) break;
      })();
      return { proc, match: m };
    }
  }
  proc.kill();
  throw new Error(`${cmd.join(" ")} did not start:\n${out}\n${await new Response(proc.stderr).text()}`);
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
}

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rss: number;
}

/** CONNS closed loops for SECONDS: each sends, awaits the full answer, records latency, repeats. */
async function load(
  name: string,
  pid: number,
  make: (i: number) => Promise<Response>,
  ok = (r: Response) => r.ok,
  conns = CONNS,
): Promise<Result> {
  let rss = 0;
  const sampler = setInterval(() => (rss = Math.max(rss, rssMb(pid))), 100);
  const figures = await closedLoop(make, ok, SECONDS, conns);
  clearInterval(sampler);
  return { name, ...figures, rss };
}

function row(r: Result, base?: Result) {
  const ratio = base ? `  ${(r.rps / base.rps).toFixed(2)}x baseline req/s` : "";
  const rss = r.rss ? `  RSS max ${r.rss.toFixed(0)} MB` : "";
  console.log(
    `${r.name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(6)} ms  errors ${r.errors}${rss}${ratio}`,
  );
}

async function gengate(dataDir: string, config: string, again = false) {
  const configPath = join(work, `${Math.random()}.toml`);
  writeFileSync(configPath, config);
  const { proc, match } = await spawnAndWait(
    [values.bin!, "serve", "--port", "0", "--data-dir", dataDir, "--config", configPath],
    // A first start prints the Default key; a restart only where it listens.
    again ? /"msg":"listening","url":"([^"]+)"/ : /Default API key[^:]*:\s+(gk_\w+)[\s\S]*?"url":"([^"]+)"/,
  );
  if (again) return { proc, key: "", url: match[1]! };
  const key = match[1]!;
  const url = match[2]!;
  const accounts = Bun.spawnSync([values.bin!, "account", "list", "--json", "--data-dir", dataDir]);
  const id = (JSON.parse(accounts.stdout.toString()) as { data: { id: string }[] }).data[0]!.id;
  Bun.spawnSync([values.bin!, "account", "credit", id, "1000000", "--data-dir", dataDir]);
  return { proc, key, url };
}

const LIMITS = "[limits]\nwrites_per_minute = 1000000\nin_flight = 100000\nrun_wait_seconds = 60\n";
console.log(
  `gengate bench: ${CONNS} connections, ${SECONDS} s per phase, loopback, load generator on the same machine (${navigator.hardwareConcurrency} cores)\n`,
);

if (values.only === "console") {
  await consolePhase();
  process.exit(0);
}

// Baseline: a bare Bun.serve hello world.
const base = await spawnAndWait(
  [
    process.execPath,
    "-e",
    'const s = Bun.serve({ port: 0, fetch: () => new Response("ok") }); console.log("port " + s.port);',
  ],
  /port (\d+)/,
);
const baseUrl = `http://127.0.0.1:${base.match[1]}`;
const baseline = await load("baseline: Bun.serve hello world", base.proc.pid, () => fetch(baseUrl));
row(baseline);
base.proc.kill();

// Submits: jobs that sleep in the sandbox, so workers take no CPU from the submit path.
const g1 = await gengate(join(work, "d1"), `${LIMITS}[queue]\nconcurrency = { sandbox = 4 }\n`);
const auth = { authorization: `Key ${g1.key}`, "content-type": "application/json" };
const submitBody = JSON.stringify({ prompt: "bench", sandbox: { delay_ms: 600000 } });
const ids: string[] = [];
const submits = await load(
  "POST /v1/queue (durable reservation)",
  g1.proc.pid,
  async () => {
    const res = await fetch(`${g1.url}/v1/queue/sandbox/image`, {
      method: "POST",
      headers: auth,
      body: submitBody,
    });
    if (res.status === 202 && ids.length < 10_000) {
      const clone = res.clone();
      ids.push(((await clone.json()) as { request_id: string }).request_id);
    }
    return res;
  },
  (r) => r.status === 202,
);
row(submits, baseline);
const reads = await load("GET /v1/requests/{id}/status", g1.proc.pid, (i) =>
  fetch(`${g1.url}/v1/requests/${ids[i % ids.length]}/status`, { headers: auth }),
);
row(reads, baseline);
g1.proc.kill("SIGKILL");

// End to end: /run with zero-delay sandbox jobs (a 64x64 PNG each), from submit to output.
const g2 = await gengate(join(work, "d2"), LIMITS); // the default 8 sandbox workers
const runAuth = { authorization: `Key ${g2.key}`, "content-type": "application/json" };
const e2e = await load(
  "POST /v1/run (sandbox job end to end)",
  g2.proc.pid,
  () =>
    fetch(`${g2.url}/v1/run/sandbox/image`, {
      method: "POST",
      headers: runAuth,
      body: '{"prompt":"bench","width":64,"height":64}',
    }),
  (r) => r.status === 200,
);
row(e2e, baseline);
g2.proc.kill("SIGKILL");

// Chat: the same mock upstream called directly, then through the gateway (non-stream completions).
const mock = await spawnAndWait(
  [process.execPath, join(import.meta.dir, "bench-mock-upstream.ts")],
  /port (\d+)/,
);
const mockUrl = `http://127.0.0.1:${mock.match[1]}/v1`;
const chatBody = JSON.stringify({
  model: "bench",
  messages: [{ role: "user", content: "Say hello." }],
  max_tokens: 16,
  stream: true,
});
const directCall = () =>
  fetch(`${mockUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: chatBody,
  });
const direct = await load("chat: mock upstream directly", mock.proc.pid, directCall);
row(direct, baseline);
const g3 = await gengate(
  join(work, "d3"),
  `${LIMITS}[providers.mock]\ntype = "openai"\nbase_url = "${mockUrl}"\n[[models]]\nid = "mock/bench"\nkind = "text"\nprovider = "mock"\nupstream_model = "bench"\ninput_price_usd_micro = 1000000\noutput_price_usd_micro = 2000000\ncontext = 8192\n`,
);
const chatAuth = { authorization: `Bearer ${g3.key}`, "content-type": "application/json" };
const gatewayBody = JSON.stringify({
  model: "mock/bench",
  messages: [{ role: "user", content: "Say hello." }],
  max_tokens: 16,
});
const viaGatewayCall = () =>
  fetch(`${g3.url}/v1/chat/completions`, { method: "POST", headers: chatAuth, body: gatewayBody });
const viaGateway = await load("chat: through gengate (billed)", g3.proc.pid, viaGatewayCall);
row(viaGateway, baseline);
// Added latency is measured with one connection: under 32 the cores saturate and queueing dominates.
const direct1 = await load("chat: upstream directly, 1 conn", mock.proc.pid, directCall, (r) => r.ok, 1);
row(direct1);
const via1 = await load("chat: through gengate, 1 conn", g3.proc.pid, viaGatewayCall, (r) => r.ok, 1);
row(via1);
console.log(
  `chat: added latency at 1 connection p50 +${(via1.p50 - direct1.p50).toFixed(2)} ms, p99 +${(via1.p99 - direct1.p99).toFixed(2)} ms; at ${CONNS} connections ${viaGateway.rps.toFixed(0)} completions/s (${(viaGateway.rps / direct.rps).toFixed(2)}x direct)`,
);
g3.proc.kill("SIGKILL");
mock.proc.kill("SIGKILL");
await consolePhase();
process.exit(0);

/**
 * Console: the keys and usage pages of an account with 10,000 requests, rendered for a signed-in
 * owner (session cookie), one connection at a time (a page's own latency, not queueing). The
 * requests are written before the server starts, through the stores (real jobs, holds and ledger
 * charges, spread over the last 60 days and 6 keys), so the figures are read from real rows.
 */
async function consolePhase() {
  const { openDatabase } = await import("../src/db/database.ts");
  const { SqliteSql } = await import("../src/db/sql-sqlite.ts");
  const { createServices } = await import("../src/server/services.ts");
  const { JobStore } = await import("../src/queue/jobs.ts");
  const { JobEvents } = await import("../src/queue/events.ts");
  const dataDir = join(work, "d4");
  const first = await gengate(dataDir, LIMITS);
  first.proc.kill("SIGKILL");
  await first.proc.exited;
  const REQUESTS = 10_000;
  const db = openDatabase(join(dataDir, "gengate.db"));
  let clock = Math.floor(Date.now() / 1000);
  const sql = new SqliteSql(db);
  const s = createServices(sql, first.url, () => clock);
  const jobs = new JobStore(sql, s.ledger, new JobEvents());
  const account = (await s.accounts.listAccounts(1, null))[0]!;
  const keys = [(await s.accounts.listKeys(account.id))[0]!.id];
  for (let k = 1; k < 6; k++) {
    keys.push(
      (await s.accounts.createKey(account.id, { name: `bench ${k}`, monthlyLimitMicro: 100_000_000_000n }))
        .keyId,
    );
  }
  const models = ["sandbox/image", "sandbox/speech", "sandbox/video"];
  const now = clock;
  const t0 = performance.now();
  await sql.tx(async (tx) => {
    const ledger = s.ledger.in(tx);
    const txJobs = jobs.in(tx);
    for (let i = 0; i < REQUESTS; i++) {
      clock = now - Math.floor(((REQUESTS - i) * 60 * 86_400) / REQUESTS); // oldest first, 60 days
      const id = Bun.randomUUIDv7();
      const keyId = keys[i % keys.length]!;
      const modelId = models[i % models.length]!;
      const quote = BigInt(1_000 + (i % 97) * 10);
      const hold = await ledger.reserve({
        accountId: account.id,
        keyId,
        modelId,
        requestId: id,
        source: "API",
        quotedUsdMicro: quote,
      });
      await txJobs.insert({
        id,
        accountId: account.id,
        keyId,
        modelId,
        kind: "image",
        source: "API",
        provider: "sandbox",
        input: "{}",
        quote: "{}",
        holdId: hold.id,
        webhookUrl: null,
        deadlineAt: clock * 1000 + 60_000,
        createdAt: clock * 1000,
        runningUntil: clock * 1000 + 60_000,
      });
      await txJobs.complete(id, {}, [], quote - BigInt(i % 3), null, 3_600_000, clock * 1000);
    }
  });
  sql.close();
  db.close();
  console.log(
    `\nconsole: ${REQUESTS} requests written through the stores in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  // The owner: an invite from the CLI, the password set on the invite page (which signs in).
  const g4 = await gengate(dataDir, LIMITS, true);
  const invite = Bun.spawnSync([
    values.bin!,
    "user",
    "invite",
    "--email",
    "bench@example.test",
    "--account",
    account.id,
    "--role",
    "owner",
    "--json",
    "--data-dir",
    dataDir,
  ]);
  const token = new URL((JSON.parse(invite.stdout.toString()) as { url: string }).url).pathname;
  const origin = new URL(g4.url).origin;
  const signIn = await fetch(`${g4.url}${token}`, {
    method: "POST",
    redirect: "manual",
    headers: { origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: "bench password 1234" }),
  });
  const cookie = /gengate_session=[^;]+/.exec(signIn.headers.getSetCookie().join("\n"))?.[0];
  if (!cookie) throw new Error(`console sign-in failed: ${signIn.status} ${await signIn.text()}`);
  const headers = { cookie };
  for (const path of ["/console/keys", "/console/usage", "/console/usage?period=month&by=key"]) {
    const page = (await fetch(`${g4.url}${path}`, { headers, redirect: "manual" })) as Response;
    if (page.status !== 200) throw new Error(`${path}: ${page.status}`);
    const r = await load(
      `GET ${path} (10k requests)`,
      g4.proc.pid,
      () => fetch(`${g4.url}${path}`, { headers }),
      (res) => res.status === 200,
      1,
    );
    row(r);
  }
  g4.proc.kill("SIGKILL");
}
