import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { doorOf } from "../../src/http/doors.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";

/**
 * A seeded, bounded fuzz run over every route and method of the server's own OpenAPI document, as
 * an attacker holding a key would: hostile bodies, queries, headers and path ids. Asserts no 5xx,
 * the contract's error body with an x-request-id on every error, and that /healthz stays prompt
 * while the hostile requests are in flight (a liveness bound, not a benchmark).
 *
 * The seed is printed; rerun one with GENGATE_FUZZ_SEED=<seed>. GENGATE_FUZZ_CASES sets the
 * number of requests (default 1500); the run also stops after FUZZ_BUDGET_MS whatever the count.
 */

const SEED = Number(process.env.GENGATE_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CASES = Number(process.env.GENGATE_FUZZ_CASES ?? 1500);
const FUZZ_BUDGET_MS = 20_000;
const CONCURRENCY = 4;
/** Generous: on an idle machine /healthz answers in about a millisecond. */
const HEALTHZ_BOUND_MS = 2_000;
const REQUEST_TIMEOUT_MS = 15_000;
/** Bodies of several MB are costly to build and send: a few per run are enough. */
const MAX_HEAVY_BODIES = 8;

/** mulberry32: small, fast, good enough to pick cases reproducibly. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}
type Rng = Awaited<ReturnType<typeof rng>>;

interface Operation {
  method: string;
  path: string;
  query: string[];
  admin: boolean;
}

interface Ids {
  ownKey: string;
  otherKey: string;
  otherAccount: string;
  ownAccount: string;
  otherRequest: string;
}

let s: TestServer;
const ops: Operation[] = [];
let ids: Ids;

const admin = () => ({ authorization: `Bearer ${s.adminToken}` });

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (rerun with GENGATE_FUZZ_SEED=${SEED}), ${CASES} cases`);
  // No write-rate cap: with it most writes after the first few hundred would only see 429.
  const config = join(tempDir(), "gengate.toml");
  writeFileSync(config, "[limits]\nwrites_per_minute = 1000000\n");
  s = await startServer({ args: ["--config", config] });
  const doc = (await (await s.fetch("/v1/openapi.json", { key: null })).json()) as {
    paths: Record<
      string,
      Record<string, { parameters?: { in: string; name: string }[]; security?: object[] }>
    >;
  };
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete", "head"].includes(method)) continue;
      ops.push({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
        admin: path.startsWith("/admin/"),
      });
    }
  }

  // Another account with a key and a job of its own: its ids are what an attacker would try.
  const ownAccount = ((await (await s.fetch("/v1/account")).json()) as { id: string }).id;
  const json = { ...admin(), "content-type": "application/json" };
  const created = await s.fetch("/admin/v1/accounts", {
    method: "POST",
    key: null,
    headers: json,
    body: JSON.stringify({ name: "other", credit: "10" }),
  });
  expect(created.status).toBe(201);
  const other = (await created.json()) as { account: { id: string }; key_id: string; key: string };
  const job = await s.fetch("/v1/queue/sandbox/image", {
    method: "POST",
    key: other.key,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "a cat" }),
  });
  const otherRequest = ((await job.json()) as { request_id: string }).request_id;
  const own = await s.fetch("/v1/keys", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "fuzz-target" }),
  });
  ids = {
    ownKey: ((await own.json()) as { id: string }).id,
    otherKey: other.key_id,
    otherAccount: other.account.id,
    ownAccount,
    otherRequest,
  };
  for (const [name, v] of Object.entries(ids)) expect({ name, v: typeof v }).toEqual({ name, v: "string" });
  expect(ops.length).toBeGreaterThan(30);
});

afterAll(() => s?.cleanup());

// ---- generators -------------------------------------------------------------------------------

const nested = (depth: number, inner = "1") => "[".repeat(depth) + inner + "]".repeat(depth);
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const HOSTILE_VALUES = [
  '{"toString": 1}',
  '{"valueOf": "x", "toString": {}}',
  '{"__proto__": {"admin": true, "polluted": 1}}',
  '{"constructor": {"prototype": {"polluted": 1}}}',
  '[{"toString": 1}]',
  "1e400",
  "-1e400",
  "9223372036854775808",
  "-9223372036854775809",
  "123456789012345678901234567890",
  "1e-400",
  "-0",
  "0.1",
  "null",
  "true",
  "[]",
  "{}",
  '""',
  '"\\u0000"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"日本語 🎉 \\u202e"',
  '"../../../etc/passwd"',
  '"sandbox/image"',
  '"12.50"',
  '"-1"',
  '"1e30"',
  '"<script>alert(1)</script>"',
  "[1, 2, 3]",
  nested(64),
  nested(65),
  nested(5000),
  nestedObjects(66),
];

/** Field names the routes read, plus names that should never be special. */
const FIELDS = [
  "model_id",
  "input",
  "name",
  "amount",
  "reason",
  "rate",
  "currency",
  "credit",
  "monthly_limit_micro",
  "can_manage",
  "prompt",
  "messages",
  "model",
  "stream",
  "max_tokens",
  "webhook_url",
  "image_url",
  "file_id",
  "num_images",
  "duration",
  "resolution",
  "__proto__",
  "constructor",
  "toString",
];

function hostileJson(r: Rng, depth = 0): string {
  if (depth < 2 && r.chance(0.35)) {
    const n = 1 + r.int(4);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) parts.push(`${JSON.stringify(r.pick(FIELDS))}: ${hostileJson(r, depth + 1)}`);
    return `{${parts.join(", ")}}`;
  }
  return r.pick(HOSTILE_VALUES);
}

let heavyBodies = 0;

/** A request body: mostly JSON objects with hostile fields, sometimes whole-body oddities. */
function body(r: Rng): string | Uint8Array {
  const roll = r.next();
  if (roll < 0.04 && heavyBodies < MAX_HEAVY_BODIES) {
    heavyBodies++;
    return r.pick([
      () => `{"model_id": "sandbox/image", "input": ${nested(20_000, "")}}`,
      () => `{"input": ${nested(62, new Array(1_000_000).fill(0).join(","))}}`,
      () => JSON.stringify({ prompt: "x".repeat(3_000_000) }),
      () => JSON.stringify({ prompt: "\u{1F600}".repeat(600_000) }),
      () => `{"a": "${"\\u0041".repeat(500_000)}"}`,
      () => JSON.stringify({ name: "x".repeat(4 * 1024 * 1024 + 1) }),
    ])();
  }
  if (roll < 0.15) {
    return r.pick([
      "",
      "{",
      "}",
      "null",
      "[]",
      '"string"',
      "0",
      '{"a":1,}',
      "\u0000\u0001\u0002",
      "\ufeff{}",
      '{"a":1}{"b":2}',
      `{"prompt": "${"[{".repeat(10_000)}"}`,
      nested(100_000, ""),
      nestedObjects(30_000),
    ]);
  }
  if (roll < 0.2) return Uint8Array.from({ length: 1 + r.int(2048) }, () => r.int(256));
  if (roll < 0.3) {
    // A plausible body with one field replaced: gets past the outer checks into the services.
    const base: Record<string, unknown> = r.pick([
      { model_id: "sandbox/image", input: { prompt: "cat" } },
      { name: "k", monthly_limit_micro: "1000" },
      { amount: "1.5", reason: "fuzz" },
      { rate: "92.5" },
      { model: "sandbox/chat", messages: [{ role: "user", content: "hi" }] },
      { prompt: "cat", num_images: 1 },
    ]);
    if (r.chance(0.15)) return JSON.stringify(base); // valid as it is: reaches the services
    const field = r.pick(Object.keys(base));
    return JSON.stringify(base).replace(`"${field}":`, `"${field}": ${hostileJson(r)}, "_":`);
  }
  return hostileJson(r, 0).startsWith("{") ? hostileJson(r, 0) : `{"model_id": ${hostileJson(r)}}`;
}

const QUERY_VALUES = [
  "-1",
  "0",
  "1",
  "1.5",
  "1e30",
  "9223372036854775808",
  "101",
  "abc",
  "",
  "%00",
  "%FF",
  "%",
  "日本",
  "true",
  "null",
  "[]",
  "x".repeat(5000),
  "IN_QUEUE",
  "sandbox/image",
  "http://169.254.169.254/latest",
];

function query(r: Rng, op: Operation): string {
  const parts: string[] = [];
  for (const name of op.query) {
    if (r.chance(0.6)) parts.push(`${name}=${encodeValue(r, r.pick(QUERY_VALUES))}`);
    if (r.chance(0.1)) parts.push(`${name}=${encodeValue(r, r.pick(QUERY_VALUES))}`); // repeated
  }
  if (r.chance(0.15))
    parts.push(r.pick(["__proto__=1", "constructor[prototype]=1", "toString=1", "a[b][c]=1", "&&="]));
  return parts.length ? `?${parts.join("&")}` : "";
}

/** Mostly percent-encoded; sometimes raw, so malformed escapes reach the server as they are. */
function encodeValue(r: Rng, v: string): string {
  return /^%/.test(v) || r.chance(0.1) ? v : encodeURIComponent(v);
}

function pathFor(r: Rng, op: Operation): string {
  return op.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) => {
    const garbage = [
      "x",
      "0",
      "-1",
      "null",
      "%00",
      "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "..",
      "é",
      "%F0%9F%8E%89",
      "a".repeat(5000),
      "00000000-0000-7000-8000-000000000000",
      `acct_${"A".repeat(80)}`,
      "1e30",
    ];
    const own: Record<string, string[]> = {
      id: op.path.startsWith("/admin/")
        ? [ids.otherAccount, ids.ownAccount]
        : op.path.startsWith("/v1/keys")
          ? [ids.ownKey, ids.otherKey]
          : [ids.otherRequest, ids.otherKey, ids.otherAccount],
      model_id: ["sandbox/image", "sandbox%2Fimage", "sandbox/chat", "x/y/z", "unknown"],
      index: ["0", "1", "999999999999"],
      currency: ["RUB", "USD", "XXX", "rub"],
    };
    return r.chance(0.5) ? r.pick(own[name] ?? ["x"]) : r.pick(garbage);
  });
}

const CONTENT_TYPES = [
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/json; charset=utf-16",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=xyz",
  "multipart/form-data",
  "application/octet-stream",
  "image/png",
  "",
];

function headers(r: Rng, op: Operation): Record<string, string> {
  const h: Record<string, string> = {};
  const good = op.admin ? `Bearer ${s.adminToken}` : `Key ${s.defaultKey}`;
  const auth = r.chance(0.6)
    ? good
    : r.pick([
        "",
        "Key",
        "Key ",
        "Bearer ",
        `Key  ${s.defaultKey}  `,
        `key\t${s.defaultKey}`,
        `Bearer ${s.defaultKey}`,
        `Key ${s.adminToken}`,
        `Bearer ${s.adminToken}`,
        `Basic ${btoa("user:pass")}`,
        `Key gk_${"A".repeat(5000)}`,
        `Key ${s.defaultKey}, Key ${s.defaultKey}`,
        "Key \u00e9\u00e8",
        "Digest username=x",
      ]);
  if (auth) h.authorization = auth;
  const ct = r.pick(CONTENT_TYPES);
  if (ct) h["content-type"] = ct;
  if (r.chance(0.1)) h["idempotency-key"] = r.pick(["", "k", "x".repeat(1000), "\u00ff"]);
  if (r.chance(0.05)) h["x-request-id"] = "req_injected\u00e9";
  if (r.chance(0.05)) h.accept = "text/event-stream";
  return h;
}

// ---- checks -----------------------------------------------------------------------------------

interface Failure {
  case: number;
  request: string;
  problem: string;
}

async function check(res: Response, method: string): Promise<string | null> {
  if (!res.headers.get("x-request-id")) return `no x-request-id (status ${res.status})`;
  if (res.status >= 500) return `status ${res.status}: ${(await res.text()).slice(0, 300)}`;
  if (res.status < 400 || method === "HEAD") {
    await res.body?.cancel();
    return null;
  }
  const text = await res.text();
  // application/json, or application/problem+json (the Replicate door's problem detail).
  if (!/^application\/(problem\+)?json/.test(res.headers.get("content-type") ?? "")) {
    return `error ${res.status} is not JSON: ${text.slice(0, 200)}`;
  }
  let e: { code?: unknown; message?: unknown; type?: unknown } | undefined;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    // Each door answers its client's own shape with gengate's code inside (src/http/doors.ts).
    const door = doorOf(new URL(res.url).pathname);
    if (door === "replicate") {
      const ok =
        typeof body.code === "string" && typeof body.detail === "string" && body.status === res.status;
      return ok ? null : `error ${res.status} lacks Replicate's problem shape: ${text.slice(0, 200)}`;
    }
    e = (body as { error?: typeof e }).error;
  } catch {
    return `error ${res.status} body does not parse: ${text.slice(0, 200)}`;
  }
  if (!e || typeof e.code !== "string" || typeof e.message !== "string" || typeof e.type !== "string") {
    return `error ${res.status} lacks the contract's shape: ${text.slice(0, 200)}`;
  }
  return null;
}

function describeRequest(method: string, url: string, h: Record<string, string>, b: unknown): string {
  const preview =
    typeof b === "string"
      ? JSON.stringify(b.slice(0, 120)) + (b.length > 120 ? `...(${b.length})` : "")
      : b
        ? "<bytes>"
        : "";
  return `${method} ${url.slice(0, 200)} ${JSON.stringify(h).slice(0, 200)} ${preview}`;
}

/** Probes /healthz every 50 ms until stopped; returns the slowest answer and any failure. */
function healthProbe() {
  let stop = false;
  let slowest = 0;
  let failure: string | null = null;
  const done = (async () => {
    while (!stop) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${s.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
        if (res.status !== 200) failure = `/healthz answered ${res.status}`;
        await res.text();
      } catch (err) {
        failure = `/healthz failed: ${String(err)}`;
      }
      slowest = Math.max(slowest, performance.now() - t0);
      await Bun.sleep(50);
    }
  })();
  return {
    async finish() {
      stop = true;
      await done;
      return { slowest, failure };
    },
  };
}

describe("fuzz over the OpenAPI document", () => {
  test(
    "no 5xx, the contract's errors, /healthz prompt throughout",
    async () => {
      const r = rng(SEED);
      // The cases are drawn up front from the seed, so concurrency does not change them.
      const cases = Array.from({ length: CASES }, (_, i) => {
        const op = i < ops.length ? ops[i]! : r.pick(ops); // every operation at least once
        const method = r.chance(0.05)
          ? r.pick(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
          : op.method;
        const url = `${s.url}${pathFor(r, op)}${query(r, op)}`;
        const h = headers(r, op);
        const b = ["GET", "HEAD"].includes(method) ? undefined : r.chance(0.9) ? body(r) : undefined;
        return { i, method, url, h, b };
      });

      const failures: Failure[] = [];
      const statuses = new Map<number, number>();
      const probe = healthProbe();
      const deadline = Date.now() + FUZZ_BUDGET_MS;
      let sent = 0;
      let next = 0;
      const worker = async () => {
        while (next < cases.length && Date.now() < deadline) {
          const c = cases[next++]!;
          sent++;
          try {
            const res = await fetch(c.url, {
              method: c.method,
              headers: c.h,
              body: c.b as string | Uint8Array | undefined,
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            });
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            const problem = await check(res, c.method);
            if (problem)
              failures.push({ case: c.i, request: describeRequest(c.method, c.url, c.h, c.b), problem });
          } catch (err) {
            failures.push({
              case: c.i,
              request: describeRequest(c.method, c.url, c.h, c.b),
              problem: String(err),
            });
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const health = await probe.finish();

      console.log(
        `fuzz seed ${SEED}: ${sent} requests over ${ops.length} operations; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}; slowest /healthz ${Math.round(health.slowest)} ms`,
      );
      if (failures.length)
        console.log(
          `seed ${SEED} failures:\n${failures
            .slice(0, 20)
            .map((f) => JSON.stringify(f))
            .join("\n")}`,
        );
      expect(failures).toEqual([]);
      expect(health.failure).toBeNull();
      expect(health.slowest).toBeLessThan(HEALTHZ_BOUND_MS);
      expect(sent).toBeGreaterThanOrEqual(Math.min(CASES, ops.length));
      // The server is still whole afterwards.
      expect((await s.fetch("/v1/account")).status).toBe(200);
    },
    { timeout: 55_000 },
  );
});
