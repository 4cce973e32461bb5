// Loopback benchmark of the backends: SQLite with one instance, PostgreSQL with one and with three
// instances (the load spread round-robin over them), in one run, printed side by side.
// Usage: scripts/bench --backend postgres [--bin dist/gengate] [--seconds 5] [--connections 32]
//                          [--instances 3] [--accounts 16] [--pg-url postgres://admin@host/db]
// PostgreSQL: --pg-url or GENGATE_TEST_PG_URL (an admin URL: it creates and drops databases), else a
// throwaway cluster started like the tests' (test/helpers/postgres.ts: needs initdb). Files stay in
// each instance's data dir (no bucket: the figures are the database's). Asserts nothing.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import { closedLoop as loop } from "./bench-load.ts";

const { values } = parseArgs({
  options: {
    backend: { type: "string", default: "postgres" },
    bin: { type: "string", default: "dist/gengate" },
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    instances: { type: "string", default: "3" },
    accounts: { type: "string", default: "16" },
    "pg-url": { type: "string" },
  },
});
if (values.backend !== "postgres") {
  console.error(
    `--backend ${values.backend}: only postgres is compared here (scripts/bench without --backend is SQLite)`,
  );
  process.exit(2);
}
if (values["pg-url"]) process.env.GENGATE_TEST_PG_URL = values["pg-url"];
const SECONDS = Number(values.seconds);
const CONNS = Number(values.connections);
const MANY = Number(values.instances);
const ACCOUNTS = Number(values.accounts);
const work = mkdtempSync(join(tmpdir(), "gengate-bench-scale-"));
const procs: Subprocess[] = [];
const drops: (() => Promise<void>)[] = [];
process.on("exit", () => {
  for (const p of procs) p.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

interface Instance {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
}

/** `gengate serve` on a free port; resolves once it listens (with the first start's key and token). */
async function serve(dataDir: string, config: string, env: Record<string, string>) {
  const proc = Bun.spawn([values.bin!, "serve", "--port", "0", "--data-dir", dataDir, "--config", config], {
    env: { ...process.env, GENGATE_CONFIG: "", ...env },
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  procs.push(proc);
  let out = "";
  const reader = proc.stdout.getReader();
  const killer = setTimeout(() => proc.kill(), 30_000);
  for (;;) {
    const { value, done } = await reader.read();
    if (done)
      throw new Error(`gengate serve did not start:\n${out}\n${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
    const url = /"msg":"listening","url":"([^"]+)"/.exec(out)?.[1];
    if (url) {
      clearTimeout(killer);
      void (async () => {
        for (;;) if ((await reader.read()).done) break; // keep draining so the child never blocks
      })();
      const key = /Default API key[^:]*:\s+(gk_\w+)/.exec(out)?.[1] ?? null;
      const token = /Admin token[^:]*:\s+(gat_\w+)/.exec(out)?.[1] ?? null;
      return { instance: { proc, url } as Instance, key, token };
    }
  }
}

const CONFIG =
  "[limits]\nwrites_per_minute = 1000000\nin_flight = 100000\nrun_wait_seconds = 60\n[queue]\nconcurrency = { sandbox = 8 }\n";

/** n instances on one database (SQLite: n must be 1), funded; they share the first one's secrets. */
async function cluster(name: string, n: number, databaseUrl: string | null) {
  const config = join(work, `${name}.toml`);
  writeFileSync(config, CONFIG);
  const env: Record<string, string> = databaseUrl ? { GENGATE_DATABASE_URL: databaseUrl } : {};
  const dirs = Array.from({ length: n }, (_, i) => join(work, `${name}-${i}`));
  const first = await serve(dirs[0]!, config, env);
  for (const d of dirs.slice(1)) {
    mkdirSync(d, { recursive: true });
    for (const f of ["server.secret", "admin.token"])
      if (existsSync(join(dirs[0]!, f))) copyFileSync(join(dirs[0]!, f), join(d, f));
  }
  const rest = await Promise.all(dirs.slice(1).map((d) => serve(d, config, env)));
  const instances = [first.instance, ...rest.map((r) => r.instance)];
  const key = first.key!;
  const account = (await (
    await fetch(`${first.instance.url}/v1/account`, { headers: { authorization: `Key ${key}` } })
  ).json()) as { id: string };
  const credit = await fetch(`${first.instance.url}/admin/v1/accounts/${account.id}/credit`, {
    method: "POST",
    headers: { authorization: `Bearer ${first.token}`, "content-type": "application/json" },
    body: JSON.stringify({ amount: "1000000", reason: "bench" }),
  });
  if (credit.status !== 200) throw new Error(`credit: ${credit.status} ${await credit.text()}`);
  // More accounts (each with its Default key): spread load takes no single key's and account's row locks.
  const keys: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const made = await fetch(`${first.instance.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${first.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `bench ${i}`, credit: "100000" }),
    });
    if (made.status !== 201) throw new Error(`account: ${made.status} ${await made.text()}`);
    keys.push(((await made.json()) as { key: string }).key);
  }
  return {
    instances,
    key,
    keys,
    stop() {
      for (const i of instances) i.proc.kill("SIGKILL");
    },
  };
}

/** CONNS closed loops for SECONDS (request i goes to instance i mod n, chosen by `make`). */
const closedLoop = (make: (i: number) => Promise<Response>, ok: (r: Response) => boolean) =>
  loop(make, ok, SECONDS, CONNS);

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-");

/** Submits/s, status reads/s (jobs that sleep: workers take no CPU), then jobs/s end to end. */
async function measure(name: string, n: number, databaseUrl: () => Promise<string | null>) {
  const c1 = await cluster(`${slug(name)}-a`, n, await databaseUrl());
  const headers = { authorization: `Key ${c1.key}`, "content-type": "application/json" };
  const at = (i: number) => c1.instances[i % n]!.url;
  const ids: string[] = [];
  const sleeping = JSON.stringify({ prompt: "bench", sandbox: { delay_ms: 600_000 } });
  const submits = await closedLoop(
    async (i) => {
      const res = await fetch(`${at(i)}/v1/queue/sandbox/image`, { method: "POST", headers, body: sleeping });
      if (res.status === 202 && ids.length < 10_000)
        ids.push(((await res.clone().json()) as { request_id: string }).request_id);
      return res;
    },
    (r) => r.status === 202,
  );
  const spread = await closedLoop(
    (i) =>
      fetch(`${at(i)}/v1/queue/sandbox/image`, {
        method: "POST",
        headers: { authorization: `Key ${c1.keys[i % ACCOUNTS]}`, "content-type": "application/json" },
        body: sleeping,
      }),
    (r) => r.status === 202,
  );
  const reads = await closedLoop(
    (i) => fetch(`${at(i)}/v1/requests/${ids[i % ids.length]}/status`, { headers }),
    (r) => r.ok,
  );
  c1.stop();

  // End to end: zero-delay jobs submitted for SECONDS, then the time until the last one completed
  // (counted through each instance's own view, so it works the same on both backends).
  const c2 = await cluster(`${slug(name)}-b`, n, await databaseUrl());
  const h2 = { authorization: `Key ${c2.key}`, "content-type": "application/json" };
  const at2 = (i: number) => c2.instances[i % n]!.url;
  const queued: string[] = [];
  const t0 = performance.now();
  const fed = await closedLoop(
    async (i) => {
      const res = await fetch(`${at2(i)}/v1/queue/sandbox/image`, {
        method: "POST",
        headers: h2,
        body: '{"prompt":"bench","width":64,"height":64}',
      });
      if (res.status === 202) queued.push(((await res.clone().json()) as { request_id: string }).request_id);
      return res;
    },
    (r) => r.status === 202,
  );
  // The last submitted job ends last or nearly: wait for every job, newest first.
  for (let k = queued.length - 1; k >= 0; k--) {
    for (;;) {
      const r = await fetch(`${at2(k)}/v1/requests/${queued[k]}/status`, { headers: h2 });
      const s = ((await r.json()) as { status: string }).status;
      if (s === "COMPLETED" || s === "FAILED") break;
      await Bun.sleep(20);
    }
  }
  const e2e = queued.length / ((performance.now() - t0) / 1000);
  c2.stop();
  return { name, submits, spread, reads, e2e, e2eErrors: fed.errors, jobs: queued.length };
}

async function pgDatabase(): Promise<string> {
  const { createTestDatabase } = await import("../test/helpers/postgres.ts");
  const db = await createTestDatabase();
  drops.push(db.drop);
  return db.url;
}

console.log(
  `gengate bench-scale: ${CONNS} connections, ${SECONDS} s per phase, loopback; instances, PostgreSQL and the load generator share this machine's ${navigator.hardwareConcurrency} cores\n`,
);
const results = [
  await measure("SQLite, 1 instance", 1, async () => null),
  await measure("PostgreSQL, 1 instance", 1, pgDatabase),
  await measure(`PostgreSQL, ${MANY} instances`, MANY, pgDatabase),
];
const col = (s: string) => s.padStart(24);
console.log(`${"".padEnd(30)}${results.map((r) => col(r.name)).join("")}`);
const line = (label: string, f: (r: (typeof results)[number]) => string) =>
  console.log(`${label.padEnd(30)}${results.map((r) => col(f(r))).join("")}`);
line("submits/s, one key", (r) => `${r.submits.rps.toFixed(0)}`);
line("  p50 / p99 ms", (r) => `${r.submits.p50.toFixed(1)} / ${r.submits.p99.toFixed(1)}`);
line("  errors", (r) => `${r.submits.errors}`);
line(`submits/s, ${ACCOUNTS} accounts`, (r) => `${r.spread.rps.toFixed(0)}`);
line("  p50 / p99 ms", (r) => `${r.spread.p50.toFixed(1)} / ${r.spread.p99.toFixed(1)}`);
line("  errors", (r) => `${r.spread.errors}`);
line("status reads/s", (r) => `${r.reads.rps.toFixed(0)}`);
line("  p50 / p99 ms", (r) => `${r.reads.p50.toFixed(1)} / ${r.reads.p99.toFixed(1)}`);
line("end-to-end jobs/s", (r) => `${r.e2e.toFixed(0)}`);
line("  jobs, submit errors", (r) => `${r.jobs}, ${r.e2eErrors}`);
for (const d of drops) await d().catch(() => {});
process.exit(0);
