// The console phase of scripts/bench: pages, exports and API listings of an account with N past
// requests, at one connection, for each N of --requests (default 10,000), then each endpoint's p50
// at every bigger N against the smallest. Also the event loop's worst stall while the pages load in a
// loop (the server's gengate_event_loop_lag_max_seconds), a concurrent submit's p99 with and
// without that load, and the database's bytes per request. It asserts nothing.
import { Database } from "bun:sqlite";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Quote } from "../src/pricing/quote.ts";
import { type Gengate, LIMITS, load, type Result, row, startGengate, submitJob } from "./bench.ts";
import { closedLoop } from "./bench-load.ts";
import { rssMb } from "./bench-proc.ts";

const METRICS_TOKEN = "bench-metrics-token-0123456789";
/**
 * Sandbox submits wait 10 minutes in 4 worker slots: they stay open and take no CPU. Retention off
 * (requests_days = 0): the seeded history spans 90 days, the default retention, and a purge mid-run
 * would measure the sweep, not the pages.
 */
const CONFIG = `${LIMITS}[queue]\nconcurrency = { sandbox = 4 }\n[metrics]\ntoken = "${METRICS_TOKEN}"\n[retention]\nrequests_days = 0\n`;
/** Pages followed by their "Older" link (or next_cursor) to reach the deep page. */
const DEEP_PAGES = 50;
const DAYS = 90;
const BATCH = 2_000;
/** A CSV download whose server grows by more than this is stopped by killing the server. */
const CSV_RSS_LIMIT_MB = 3_000;

/** One model per kind the console shows, the chat model among them (a text job with tokens). */
const MODELS = [
  { id: "sandbox/image", kind: "image", unit: "image" },
  { id: "sandbox/speech", kind: "audio", unit: "second" },
  { id: "sandbox/video", kind: "video", unit: "second" },
  { id: "sandbox/chat", kind: "text", unit: "1M_tokens" },
] as const;

export interface ConsoleOptions {
  /** Past requests to write, one data dir each. */
  sizes: number[];
  /** Seconds of each measured endpoint (and of each half of the submit check). */
  seconds: number;
}

/** Everything one size measured, by endpoint name. */
interface SizeFigures {
  n: number;
  pages: Map<string, Result>;
  /** Seeding, bytes, exports, stalls and submits: printed side by side for every size. */
  figures: Map<string, number>;
}

export async function consolePhase(bin: string, dir: string, o: ConsoleOptions): Promise<void> {
  const done: SizeFigures[] = [];
  for (const n of o.sizes) done.push(await oneSize(bin, join(dir, `console-${n}`), n, o.seconds));
  if (done.length < 2) return;
  console.log(`\nconsole: figures by past requests (same run)`);
  console.log(`  ${"figure".padEnd(56)} ${done.map((d) => String(d.n).padStart(10)).join(" ")}`);
  for (const k of done[0]!.figures.keys())
    console.log(
      `  ${k.padEnd(56)} ${done.map((d) => (d.figures.get(k)?.toFixed(2) ?? "-").padStart(10)).join(" ")}`,
    );
  const small = done[0]!;
  for (const big of done.slice(1)) {
    console.log(`\nconsole: p50 at ${big.n} past requests against ${small.n} (same run)`);
    console.log(
      `  ${"endpoint (ms)".padEnd(40)} ${"p50 small".padStart(10)} ${"p50 big".padStart(10)}  ratio  ${"p99 small".padStart(10)} ${"p99 big".padStart(10)}`,
    );
    for (const [name, r] of big.pages) {
      const s = small.pages.get(name);
      if (!s) continue;
      const f = (x: number) => x.toFixed(2).padStart(10);
      console.log(
        `  ${name.padEnd(40)} ${f(s.p50)} ${f(r.p50)} ${`${(r.p50 / s.p50).toFixed(2)}x`.padStart(6)}  ${f(s.p99)} ${f(r.p99)}`,
      );
    }
  }
}

async function oneSize(bin: string, dataDir: string, n: number, seconds: number): Promise<SizeFigures> {
  console.log(`\n== console: ${n} past requests`);
  // First start: the Default key, the owner signed in (its session is stored, so it survives the
  // restart below), then the server stops while the history is written.
  const first = await startGengate(bin, dataDir, CONFIG);
  const cookie = await signInOwner(bin, dataDir, first.url);
  first.proc.kill("SIGKILL");
  await first.proc.exited;
  const figures = new Map<string, number>();
  figures.set("seeding, requests/s", await seed(dataDir, n, first.url));
  figures.set("database bytes per request", bytesPerRequest(dataDir, n));

  const g = { ...(await startGengate(bin, dataDir, CONFIG, true)), key: first.key };
  const pid = g.proc.pid;
  const site = { cookie };
  const api = { authorization: `Bearer ${g.key}` };
  const get = (path: string, headers: Record<string, string>) => fetch(`${g.url}${path}`, { headers });
  const pages = new Map<string, Result>();
  const measure = async (name: string, path: string, headers: Record<string, string>) => {
    const first = await get(path, headers);
    const text = await first.text();
    if (first.status !== 200) throw new Error(`${path}: ${first.status} ${text.slice(0, 500)}`);
    const r = await load(
      `GET ${name}`.padEnd(40),
      pid,
      () => get(path, headers),
      { seconds, connections: 1 },
      (res) => res.status === 200,
    );
    row(r);
    pages.set(name, r);
  };

  const walletDeep = await deepHtml(g.url, "/console/wallet", site);
  const requestsDeep = await deepHtml(g.url, "/console/requests", site);
  const apiRequestsDeep = await deepJson(g.url, "/v1/requests", api);
  const ledgerDeep = await deepJson(g.url, "/v1/account/ledger", api);
  const endpoints: [string, string, Record<string, string>][] = [
    ["/console (Overview)", "/console", site],
    ["/console/usage (by model, per day)", "/console/usage", site],
    ["/console/usage?by=key", "/console/usage?by=key", site],
    ["/console/usage?period=month", "/console/usage?period=month", site],
    ["/console/usage?period=month&by=key", "/console/usage?period=month&by=key", site],
    ["/console/wallet (first page)", "/console/wallet", site],
    ["/console/wallet (deep page)", walletDeep.path, site],
    ["/console/requests (first page)", "/console/requests", site],
    ["/console/requests (deep page)", requestsDeep.path, site],
    ["/v1/account/spend", "/v1/account/spend", api],
    ["/v1/requests (first page)", "/v1/requests", api],
    ["/v1/requests (deep page)", apiRequestsDeep.path, api],
    ["/v1/account/ledger (first page)", "/v1/account/ledger", api],
    ["/v1/account/ledger (deep page)", ledgerDeep.path, api],
  ];
  const depths = {
    wallet: walletDeep,
    requests: requestsDeep,
    "v1 requests": apiRequestsDeep,
    ledger: ledgerDeep,
  };
  console.log(
    `  deep pages: ${Object.entries(depths)
      .map(([k, d]) => `${k} page ${d.depth + 1}`)
      .join(", ")}`,
  );
  for (const [name, path, headers] of endpoints) await measure(name, path, headers);

  const lag = async () => await maxLag(g.url);

  // The pages (no exports) in a loop at one connection, with submits at 4 connections beside them.
  const loop = endpoints.map(([, path, headers]) => [path, headers] as const);
  await submitsBesidePages(g, loop, seconds, lag, figures);
  // Last: an export that is built whole in memory may have to be stopped by killing the server.
  for (const path of ["/console/usage.csv", "/console/wallet.csv", "/console/requests.csv"])
    if (!(await csv(g, path, site, lag, figures))) break;
  g.proc.kill("SIGKILL");
  await g.proc.exited;
  rmSync(dataDir, { recursive: true, force: true }); // 1.9 GB at 1,000,000 requests
  return { n, pages, figures };
}

/** An owner invited through the CLI sets a password on the invite page, which signs in. */
async function signInOwner(bin: string, dataDir: string, url: string): Promise<string> {
  const accounts = Bun.spawnSync([bin, "account", "list", "--json", "--data-dir", dataDir]);
  const account = (JSON.parse(accounts.stdout.toString()) as { data: { id: string }[] }).data[0]!.id;
  const invite = Bun.spawnSync([
    ...[bin, "user", "invite", "--email", "bench@example.test", "--account", account],
    ...["--role", "owner", "--json", "--data-dir", dataDir],
  ]);
  const token = new URL((JSON.parse(invite.stdout.toString()) as { url: string }).url).pathname;
  const signIn = await fetch(`${url}${token}`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: new URL(url).origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: "bench password 1234" }),
  });
  const cookie = /gengate_session=[^;]+/.exec(signIn.headers.getSetCookie().join("\n"))?.[0];
  if (!cookie) throw new Error(`console sign-in failed: ${signIn.status} ${await signIn.text()}`);
  return cookie;
}

/**
 * Writes `n` past requests through the stores the server uses (Ledger.reserve, JobStore.insert,
 * complete / fail / cancel, built by the server's own factories, so every rollup those stores keep
 * is kept), oldest first over the last 90 days, in transactions of 2,000: 6 keys, 4 models (one a
 * chat model), about 2 % failed and 1 % cancelled (their holds released), 2 % keyless studio jobs.
 */
async function seed(dataDir: string, n: number, publicUrl: string): Promise<number> {
  const { openDatabase } = await import("../src/db/database.ts");
  const { SqliteSql } = await import("../src/db/sql-sqlite.ts");
  const { createServices } = await import("../src/app/services.ts");
  const { createQueueServices } = await import("../src/app/queue-services.ts");
  const { liveFromConfig } = await import("../src/app/app-context.ts");
  const { serializeQuote } = await import("../src/pricing/quote.ts");
  type ConfigFile = import("../src/config/schema.ts").ConfigFile;
  const db = openDatabase(join(dataDir, "gengate.db"));
  const sql = new SqliteSql(db);
  const now = Math.floor(Date.now() / 1000);
  let clock = now;
  const s = createServices(sql, publicUrl, () => clock);
  const { live } = liveFromConfig({ models: [], catalog: { sandbox: true } } as ConfigFile);
  const q = createQueueServices(sql, s, {
    publicUrl,
    baseUrl: `${publicUrl}/v1`,
    filesRoot: join(dataDir, "files"),
    linkSecrets: ["bench-link-secret-bench-link-secret"],
    webhookPolicy: () => live.webhooks,
    live,
  });
  await q.jobs.whenReady();
  const account = (await s.accounts.listAccounts(1, null))[0]!;
  const keys = [(await s.accounts.listKeys(account.id))[0]!.id];
  for (let k = 1; k < 6; k++)
    keys.push((await s.accounts.createKey(account.id, { name: `bench ${k}` })).keyId);
  const owner = db.query<{ id: string }, []>("SELECT id FROM people LIMIT 1").get()!.id;

  const t0 = performance.now();
  let written = 0;
  while (written < n) {
    const end = Math.min(n, written + BATCH);
    await sql.tx(async (tx) => {
      const ledger = s.ledger.in(tx);
      const jobs = q.jobs.in(tx);
      for (let i = written; i < end; i++) {
        clock = now - Math.floor(((n - i) * DAYS * 86_400) / n); // oldest first
        const at = clock * 1000;
        const id = Bun.randomUUIDv7("hex", at);
        const model = MODELS[i % MODELS.length]!;
        const studio = i % 50 === 25;
        const keyId = studio ? null : keys[i % keys.length]!;
        const source = studio ? "STUDIO" : "API";
        const amount = BigInt(1_000 + (i % 97) * 10);
        const chat = model.kind === "text";
        const quote: Quote =
          model.unit === "1M_tokens"
            ? {
                ...{
                  model_id: model.id,
                  unit: model.unit,
                  input_tokens: 200,
                  output_tokens: 300,
                  units: "0.0005",
                },
                ...{
                  input_price_usd_micro: amount,
                  output_price_usd_micro: amount,
                  amount_usd_micro: amount,
                },
              }
            : {
                ...{ model_id: model.id, unit: model.unit, quantity: 1n, quantity_per_unit: 1n, units: "1" },
                ...{ resolution: null, unit_price_usd_micro: amount, amount_usd_micro: amount },
              };
        const outcome = i % 100 < 2 ? "fail" : i % 100 === 2 && !chat ? "cancel" : "complete";
        const hold = await ledger.reserve({
          accountId: account.id,
          keyId,
          modelId: model.id,
          requestId: id,
          source,
          quotedUsdMicro: amount,
        });
        await jobs.insert({
          id,
          accountId: account.id,
          keyId,
          personId: studio ? owner : null,
          modelId: model.id,
          kind: model.kind,
          source,
          provider: "sandbox",
          input: '{"prompt":"bench"}',
          quote: serializeQuote(quote),
          holdId: hold.id,
          webhookUrl: null,
          deadlineAt: at + 600_000,
          createdAt: at,
          // A cancel is of a queued job; the others ran (chat in its request, media in a worker).
          runningUntil: outcome === "cancel" ? undefined : at + 600_000,
        });
        const finished = at + 1_000 + (i % 7) * 500;
        if (outcome === "fail") await jobs.fail(id, "upstream_error", "bench: failed upstream", finished);
        else if (outcome === "cancel") await jobs.cancel(id, finished);
        else
          await jobs.complete(
            id,
            chat ? { text: "Hello.", finish_reason: "stop", usage: chatUsage(i) } : {},
            [],
            amount - BigInt(i % 3),
            chat ? String(chatUsage(i).total_tokens) : null,
            3_600_000,
            finished,
          );
      }
    });
    written = end;
    if (written % Math.max(BATCH, Math.floor(n / 10 / BATCH) * BATCH) === 0 || written === n) {
      const s = (performance.now() - t0) / 1000;
      console.log(
        `  seeded ${written} requests in ${s.toFixed(1)} s: ${(written / s).toFixed(0)} requests/s`,
      );
    }
  }
  sql.close();
  db.close();
  return n / ((performance.now() - t0) / 1000);
}

/** A chat call's tokens as a chat reply records them. */
function chatUsage(i: number) {
  const completion = 1 + (i % 300);
  return { prompt_tokens: 200, completion_tokens: completion, total_tokens: 200 + completion };
}

/** The database's size per request after the seeding (WAL checkpointed), and per table (dbstat). */
function bytesPerRequest(dataDir: string, n: number): number {
  const path = join(dataDir, "gengate.db");
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  const before = size(path) + size(`${path}-wal`);
  const db = new Database(path);
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const after = size(path) + size(`${path}-wal`);
  console.log(
    `  database: ${(before / 1e6).toFixed(1)} MB with its WAL, ${(after / 1e6).toFixed(1)} MB checkpointed: ${(after / n).toFixed(0)} bytes per request`,
  );
  try {
    const tables = db
      .query<{ name: string; bytes: number }, []>(
        "SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 14",
      )
      .all();
    for (const t of tables)
      console.log(
        `    ${t.name.padEnd(40)} ${(t.bytes / 1e6).toFixed(1).padStart(8)} MB ${(t.bytes / n).toFixed(0).padStart(6)} B/request`,
      );
  } catch {
    console.log("    (no dbstat in this SQLite: per-table sizes skipped)");
  }
  db.close();
  return after / n;
}

/** Follows a console page's "Older" link DEEP_PAGES times (or to the last page). */
async function deepHtml(url: string, path: string, headers: Record<string, string>) {
  let at = path;
  let depth = 0;
  for (; depth < DEEP_PAGES; depth++) {
    const page = await (await fetch(`${url}${at}`, { headers })).text();
    const older = /href="([^"]*cursor=[^"]*)"[^>]*>Older</.exec(page)?.[1];
    if (!older) break;
    at = older.replaceAll("&amp;", "&");
  }
  return { path: at, depth };
}

/** Follows an API listing's next_cursor DEEP_PAGES times (or to the last page). */
async function deepJson(url: string, path: string, headers: Record<string, string>) {
  let at = path;
  let depth = 0;
  for (; depth < DEEP_PAGES; depth++) {
    const body = (await (await fetch(`${url}${at}`, { headers })).json()) as { next_cursor?: string | null };
    if (!body.next_cursor) break;
    at = `${path}?cursor=${encodeURIComponent(body.next_cursor)}`;
  }
  return { path: at, depth };
}

/** The worst event-loop stall since the previous call (the scrape resets the server's max). */
async function maxLag(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const m = /^gengate_event_loop_lag_max_seconds (\S+)$/m.exec(await res.text());
  return m ? Number(m[1]) * 1000 : Number.NaN;
}

/**
 * A CSV export three times: time to the first body byte and to the end, bytes, the server's RSS
 * growth while it streams (VmRSS every 5 ms against the value before), the worst event-loop stall.
 */
async function csv(
  g: Gengate,
  path: string,
  headers: Record<string, string>,
  lag: () => Promise<number>,
  figures: Map<string, number>,
): Promise<boolean> {
  const { url } = g;
  const pid = g.proc.pid;
  const runs: { first: number; total: number; bytes: number; grew: number; lag: number }[] = [];
  for (let k = 0; k < 3; k++) {
    await lag();
    const before = rssMb(pid);
    let peak = before;
    let killed = false;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(pid));
      // An export held whole in memory grows with the history: stop it before it takes the machine.
      if (peak - before > CSV_RSS_LIMIT_MB && !killed) {
        killed = true;
        g.proc.kill("SIGKILL");
      }
    }, 5);
    const t0 = performance.now();
    let first = -1;
    let bytes = 0;
    try {
      const res = await fetch(`${url}${path}`, { headers });
      if (res.status === 404) {
        clearInterval(sampler);
        await res.arrayBuffer();
        console.log(`GET ${path}: 404, skipped`);
        return true;
      }
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      const reader = res.body!.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (first < 0) first = performance.now() - t0;
        bytes += value.byteLength;
      }
    } catch (err) {
      clearInterval(sampler);
      if (!killed) throw err;
      const at = (performance.now() - t0).toFixed(0);
      console.log(
        `GET ${path}: server killed at RSS +${(peak - before).toFixed(0)} MB after ${at} ms, ${bytes} bytes received (limit ${CSV_RSS_LIMIT_MB} MB); the exports after it are skipped`,
      );
      figures.set(`${path.slice(path.lastIndexOf("/") + 1)}: killed at RSS growth, MB`, peak - before);
      return false;
    }
    const total = performance.now() - t0;
    clearInterval(sampler);
    peak = Math.max(peak, rssMb(pid));
    runs.push({ first, total, bytes, grew: peak - before, lag: await lag() });
  }
  return report(path, runs, figures);
}

/** One export's figures: medians of the three runs' times, the first run's bytes and RSS growth. */
function report(
  path: string,
  runs: { first: number; total: number; bytes: number; grew: number; lag: number }[],
  figures: Map<string, number>,
): boolean {
  const med = (f: (r: (typeof runs)[number]) => number) => runs.map(f).sort((a, b) => a - b)[1]!;
  const name = path.slice(path.lastIndexOf("/") + 1);
  figures.set(
    `${name}: first byte, ms (median of 3)`,
    med((r) => r.first),
  );
  figures.set(
    `${name}: total, ms (median of 3)`,
    med((r) => r.total),
  );
  figures.set(`${name}: MB`, runs[0]!.bytes / 1e6);
  figures.set(`${name}: server RSS growth, MB (first run)`, runs[0]!.grew);
  figures.set(`${name}: worst event-loop stall, ms`, Math.max(...runs.map((r) => r.lag)));
  console.log(
    `GET ${path.padEnd(30)} first byte ${med((r) => r.first).toFixed(1)} ms  total ${med((r) => r.total).toFixed(1)} ms  ${(runs[0]!.bytes / 1e6).toFixed(2)} MB  RSS +${runs[0]!.grew.toFixed(1)} MB (first run; max ${Math.max(...runs.map((r) => r.grew)).toFixed(1)})  worst stall ${Math.max(...runs.map((r) => r.lag)).toFixed(1)} ms`,
  );
  return true;
}

/**
 * Submits (sandbox jobs, 4 connections) alone, then beside the pages loaded in a loop at one
 * connection: their p99 both ways, and the worst event-loop stall in each window.
 */
async function submitsBesidePages(
  g: Gengate,
  pages: (readonly [string, Record<string, string>])[],
  seconds: number,
  lag: () => Promise<number>,
  figures: Map<string, number>,
): Promise<void> {
  const ids: string[] = [];
  const submit = submitJob(g, ids);
  const accepted = (r: Response) => r.status === 202;
  await closedLoop(submit, accepted, 1, 4); // warm-up: the first submits compile the path
  await lag();
  const alone = await closedLoop(submit, accepted, seconds, 4);
  const lagAlone = await lag();
  // The page loop in its own process (scripts/bench-page-loop.ts): in this one, reading the pages
  // delayed the submits' answers in the generator itself (p99 7.0x at 10,000 requests, 725 ms stall).
  const pageLoop = Bun.spawn(
    [process.execPath, join(import.meta.dir, "bench-page-loop.ts"), g.url, JSON.stringify(pages)],
    { stdin: "pipe", stdout: "pipe" },
  );
  await Bun.sleep(300); // the loop started and its first pages compiled
  await lag();
  const beside = await closedLoop(submit, accepted, seconds, 4);
  const lagBeside = await lag();
  pageLoop.stdin.end();
  const loaded = Number((await new Response(pageLoop.stdout).text()).trim());
  await pageLoop.exited;
  const f = (x: number) => x.toFixed(2).padStart(7);
  console.log(
    `submits alone (4 conns):            ${alone.rps.toFixed(0).padStart(6)}/s  p50 ${f(alone.p50)} ms  p99 ${f(alone.p99)} ms  errors ${alone.errors}  worst stall ${lagAlone.toFixed(1)} ms`,
  );
  console.log(
    `submits beside the page loop:       ${beside.rps.toFixed(0).padStart(6)}/s  p50 ${f(beside.p50)} ms  p99 ${f(beside.p99)} ms  errors ${beside.errors}  worst stall ${lagBeside.toFixed(1)} ms (${loaded} pages loaded)`,
  );
  console.log(`  submit p99 beside the pages / alone: ${(beside.p99 / alone.p99).toFixed(2)}x`);
  figures.set("page loop: worst event-loop stall, ms", lagBeside);
  figures.set("submits alone: worst event-loop stall, ms", lagAlone);
  figures.set("submit p99 alone, ms", alone.p99);
  figures.set("submit p99 beside the page loop, ms", beside.p99);
  figures.set("submit p99 beside / alone", beside.p99 / alone.p99);
}
