/**
 * One job, many doors (docs/clients.md): random calls through random doors (the queue, Replicate's
 * models and version routes, OpenAI's images, speech, videos, chat and Responses, Anthropic's
 * Messages) onto one account, with
 * two keys (one with a monthly limit) and a balance that runs out part-way, some calls asked to fail.
 * After every sequence, whatever each door answered:
 *   - a refused call opened nothing (the jobs listed are exactly the accepted calls), and its error
 *     carries gengate's code in the door's own shape;
 *   - every job has exactly one hold, resolved exactly once (a charge or a release); a failed job is
 *     charged nothing; a charge never exceeds its hold and equals the record's charged price;
 *     a media job's hold is exactly POST /v1/estimate's price for its input;
 *   - balance = credit - the sum of the charges, nothing left held, the limited key within its limit;
 *   - the doors agree on each job: /v1/requests/{id} and, for media, Replicate's prediction (status,
 *     model, input).
 * Seeded (test/helpers/seeds.ts): FC_SEED replays a sequence.
 */
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { pollUntil, startFunded } from "../helpers/api.ts";
import { propertySeeds } from "../helpers/seeds.ts";
import type { TestServer } from "../helpers/server.ts";

type Server = Awaited<ReturnType<typeof startFunded>>;

const CREDIT_USD = "0.2";
const KEY_LIMIT_MICRO = 60_000n;

type Kind = "image" | "speech" | "video" | "chat";
const MODEL: Record<Kind, string> = {
  image: "sandbox/image",
  speech: "sandbox/speech",
  video: "sandbox/video",
  chat: "sandbox/chat",
};

type Door =
  | "queue"
  | "replicate-model"
  | "replicate-version"
  | "openai-images"
  | "openai-speech"
  | "openai-videos"
  | "chat"
  | "responses"
  | "anthropic";
/** The doors onto each kind of model. */
const DOORS: Record<Kind, Door[]> = {
  image: ["queue", "replicate-model", "replicate-version", "openai-images"],
  speech: ["queue", "replicate-model", "replicate-version", "openai-speech"],
  video: ["queue", "openai-videos"],
  chat: ["chat", "responses", "anthropic"],
};

interface Call {
  door: Door;
  kind: Kind;
  model: string;
  units: number;
  fail: boolean;
  key: 0 | 1;
}

/** What a door answered: the job it opened (its request id), or the refusal's status and code. */
type Outcome = { opened: string } | { refused: number; code: string };

/** The native input of a media call (the queue's and Replicate's doors send it as it is). */
function mediaInput(c: Call): Record<string, unknown> {
  const sandbox = c.fail ? { fail: true } : {};
  if (c.kind === "image") return { prompt: "a fox", num_images: c.units, width: 64, height: 64, sandbox };
  if (c.kind === "video") return { prompt: "a fox", duration: c.units, resolution: "480p", sandbox };
  return { text: "hello", duration: c.units, sandbox };
}

const PROMPT = "Say something short.";

/** The code inside each door's error shape. */
function codeOf(door: Door, body: Record<string, any>): string {
  if (door === "anthropic") return body.error?.code;
  if (door.startsWith("replicate")) return body.code;
  return body.error?.code;
}

/** The request each door's client sends for the call (OpenAI's, Anthropic's, Replicate's, fal's). */
function request(c: Call): { path: string; body: unknown; headers?: Record<string, string> } {
  const failing = c.fail ? { sandbox: { fail: true } } : {};
  switch (c.door) {
    case "queue":
      return { path: `/v1/queue/${c.model}`, body: mediaInput(c) };
    case "replicate-model":
      return { path: `/v1/models/${c.model}/predictions`, body: { input: mediaInput(c) } };
    case "replicate-version":
      return { path: "/v1/predictions", body: { version: c.model, input: mediaInput(c) } };
    case "openai-images":
      return {
        path: "/v1/images/generations",
        body: {
          model: c.model,
          prompt: "a fox",
          n: c.units,
          size: "64x64",
          response_format: "url",
          ...failing,
        },
      };
    case "openai-speech":
      // OpenAI's speech call has no duration: the model's default length is held and made.
      return {
        path: "/v1/audio/speech",
        body: { model: c.model, input: "hello", voice: "alloy", response_format: "wav", ...failing },
      };
    case "openai-videos":
      return {
        path: "/v1/videos",
        body: { model: c.model, prompt: "a fox", seconds: String(c.units), size: "854x480", ...failing },
      };
    case "chat":
      return {
        path: "/v1/chat/completions",
        body: {
          model: c.model,
          messages: [{ role: "user", content: PROMPT }],
          max_tokens: c.units * 8,
          ...failing,
        },
      };
    case "responses":
      return {
        path: "/v1/responses",
        body: { model: c.model, input: PROMPT, max_output_tokens: c.units * 8, ...failing },
      };
    case "anthropic":
      return {
        path: "/v1/messages",
        body: {
          model: c.model,
          max_tokens: c.units * 8,
          messages: [{ role: "user", content: PROMPT }],
          ...failing,
        },
        headers: { "anthropic-version": "2023-06-01" },
      };
  }
}

async function call(s: Server, keys: string[], c: Call): Promise<Outcome> {
  const key = keys[c.key]!;
  const r = request(c);
  // Anthropic's SDK sends its key as x-api-key; every other client in Authorization.
  const res =
    c.door === "anthropic"
      ? await s.post(r.path, r.body, { key: null, headers: { ...r.headers, "x-api-key": key } })
      : await s.post(r.path, r.body, { key });
  // The OpenAI media doors answer the job's bytes or links; the job's id is in a header.
  const header = res.headers.get("x-gengate-request-id");
  const text = await res.text();
  if (res.status < 400 && header) return { opened: header };
  const body = JSON.parse(text) as Record<string, any>;
  // A call whose job failed opened its job (FAILED, nothing charged): its id is in the error.
  const failedJob = res.status === 502 ? (body.request_id ?? body.error?.request_id) : undefined;
  if (failedJob) return { opened: String(failedJob) };
  if (res.status >= 400) return { refused: res.status, code: codeOf(c.door, body) };
  return { opened: String(body.request_id ?? body.id).replace(/^(chatcmpl-|resp_|msg_)/, "") };
}

const callArb: fc.Arbitrary<Call> = fc
  .record({
    kind: fc.constantFrom<Kind>("image", "image", "speech", "video", "chat", "chat"),
    pick: fc.nat(3),
    units: fc.integer({ min: 1, max: 3 }),
    fail: fc.nat(3).map((n) => n === 0), // one call in four is asked to fail
    key: fc.constantFrom<0 | 1>(0, 1),
  })
  .map(({ kind, pick, units, fail, key }) => ({
    door: DOORS[kind][pick % DOORS[kind].length]!,
    kind,
    model: MODEL[kind],
    units: kind === "video" ? Math.min(units, 2) : units,
    fail,
    key,
  }));

const PREDICTION_STATUS: Record<string, string> = {
  COMPLETED: "succeeded",
  FAILED: "failed",
  CANCELLED: "canceled",
};

interface LedgerEntry {
  kind: string;
  key_id: string | null;
  amount_micro: string;
  request_id: string | null;
}

async function allLedger(s: TestServer, key: string): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  let cursor: string | null = null;
  do {
    const res = await s.fetch(`/v1/account/ledger?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { key });
    const page = (await res.json()) as { data: LedgerEntry[]; next_cursor: string | null };
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.cleanup();
});

const seen = { opened: 0, refused402: 0, keyLimit: 0, failed: 0, completed: 0 };

describe("doors: random calls through random doors keep the ledger's invariants", () => {
  for (const seed of propertySeeds(20261127, 2)) {
    test(`seed ${seed}`, async () => {
      const calls = fc.sample(fc.array(callArb, { minLength: 10, maxLength: 16 }), { seed, numRuns: 1 })[0]!;
      const s = await startFunded("", CREDIT_USD);
      servers.push(s);
      const owner = s.defaultKey!;
      const created = await s.post("/v1/keys", {
        name: "limited",
        monthly_limit_micro: String(KEY_LIMIT_MICRO),
      });
      expect(created.status).toBe(201);
      const limitedKey = (await created.json()) as { key: string; id: string };
      const keys = [owner, limitedKey.key];

      // Three at a time, so doors race for the same balance and limit.
      const outcomes: Outcome[] = [];
      for (let i = 0; i < calls.length; i += 3) {
        outcomes.push(...(await Promise.all(calls.slice(i, i + 3).map((c) => call(s, keys, c)))));
      }

      const opened = new Map<string, Call>();
      outcomes.forEach((o, i) => {
        const c = calls[i]!;
        if ("opened" in o) opened.set(o.opened, c);
        else {
          // A refusal is a money refusal in the door's shape with gengate's code (the inputs are valid).
          expect([402, 429]).toContain(o.refused);
          expect(["insufficient_balance", "key_limit_reached", "too_many_in_flight"]).toContain(o.code);
          if (o.refused === 402) seen.refused402++;
          if (o.code === "key_limit_reached") seen.keyLimit++;
        }
      });
      seen.opened += opened.size;

      // Every job ends; the list holds exactly the accepted calls.
      const records = new Map<string, Record<string, any>>();
      for (const id of opened.keys()) {
        records.set(
          id,
          await pollUntil(
            async () => (await (await s.get(`/v1/requests/${id}`)).json()) as Record<string, any>,
            (r) => ["COMPLETED", "FAILED", "CANCELLED"].includes(r.status),
            30_000,
          ),
        );
      }
      const listed = (await (await s.get("/v1/requests?limit=100")).json()) as {
        data: { request_id: string }[];
      };
      expect(new Set(listed.data.map((r) => r.request_id))).toEqual(new Set(opened.keys()));

      const ledger = await allLedger(s, owner);
      let charges = 0n;
      for (const [id, c] of opened) {
        const r = records.get(id)!;
        expect(r.model_id).toBe(c.model);
        const mine = ledger.filter((e) => e.request_id === id);
        const holds = mine.filter((e) => e.kind === "hold");
        const charged = mine.filter((e) => e.kind === "charge");
        const released = mine.filter((e) => e.kind === "release");
        expect(holds.length).toBe(1);
        expect(charged.length + released.length).toBe(1);
        const hold = BigInt(holds[0]!.amount_micro);
        const charge = charged.length ? BigInt(charged[0]!.amount_micro) : 0n;
        expect(charge).toBeLessThanOrEqual(hold);
        expect(String(charge)).toBe(r.price.charged_micro ?? "0");
        if (r.status !== "COMPLETED") {
          expect(charge).toBe(0n);
          seen.failed++;
        } else seen.completed++;
        if (c.fail) expect(r.status).toBe("FAILED");
        if (c.kind !== "chat") {
          // The hold is the estimate of the job's input, whatever the door it came through.
          const est = (await (
            await s.post("/v1/estimate", { model_id: c.model, input: r.input })
          ).json()) as {
            price_usd_micro: string;
          };
          expect(String(hold)).toBe(est.price_usd_micro);
          if (r.status === "COMPLETED") expect(charge).toBe(hold);
          if (["queue", "replicate-model", "replicate-version"].includes(c.door))
            expect(r.input).toEqual(mediaInput(c));
          // Replicate's view of the same job agrees, and OpenAI's for a video.
          const p = (await (await s.get(`/v1/predictions/${id}`)).json()) as Record<string, any>;
          expect([p.model, p.status]).toEqual([c.model, PREDICTION_STATUS[r.status as string]]);
          expect(p.input).toEqual(r.input);
          if (c.kind === "video") {
            const v = (await (await s.get(`/v1/videos/${id}`)).json()) as Record<string, any>;
            expect([v.model, v.status]).toEqual([c.model, r.status === "COMPLETED" ? "completed" : "failed"]);
          }
        }
        charges += charge;
      }

      const account = (await (await s.get("/v1/account")).json()) as {
        held_micro: string;
        balance_micro: string;
      };
      expect(account.held_micro).toBe("0");
      expect(BigInt(account.balance_micro)).toBe(200_000n - charges);
      const limitedSpend = ledger
        .filter((e) => e.kind === "charge" && e.key_id === limitedKey.id)
        .reduce((sum, e) => sum + BigInt(e.amount_micro), 0n);
      expect(limitedSpend).toBeLessThanOrEqual(KEY_LIMIT_MICRO);
    }, 120_000);
  }

  test("the sequences exercised what they claim", () => {
    console.log("doors property:", JSON.stringify(seen));
    expect(seen.opened).toBeGreaterThan(0);
    expect(seen.completed).toBeGreaterThan(0);
    expect(seen.refused402 + seen.failed).toBeGreaterThan(0);
  });
});
