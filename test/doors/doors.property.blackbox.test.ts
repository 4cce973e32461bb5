/**
 * One job, many doors (docs/clients.md): random calls through random doors onto one account, with
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

const CREDIT_USD = "0.08";
const KEY_LIMIT_MICRO = 30_000n;

interface Call {
  door: Door;
  model: "sandbox/image" | "sandbox/speech" | "sandbox/chat";
  units: number;
  fail: boolean;
  key: 0 | 1;
}

type Door = "queue" | "replicate-model" | "replicate-version" | "chat" | "responses" | "anthropic";
const MEDIA_DOORS: Door[] = ["queue", "replicate-model", "replicate-version"];
const TEXT_DOORS: Door[] = ["chat", "responses", "anthropic"];

/** What a door answered: the job it opened (its request id), or the refusal's status and code. */
type Outcome = { opened: string } | { refused: number; code: string };

function mediaInput(c: Call): Record<string, unknown> {
  const sandbox = c.fail ? { fail: true } : {};
  return c.model === "sandbox/image"
    ? { prompt: "a fox", num_images: c.units, width: 64, height: 64, sandbox }
    : { text: "hello", duration: c.units, sandbox };
}

const PROMPT = "Say something short.";

/** The code inside each door's error shape. */
function codeOf(door: Door, body: Record<string, any>): string {
  if (door === "anthropic") return body.error?.code;
  if (door.startsWith("replicate")) return body.code;
  return body.error?.code;
}

async function call(s: Server, keys: string[], c: Call): Promise<Outcome> {
  const key = keys[c.key]!;
  let res: Response;
  switch (c.door) {
    case "queue":
      res = await s.post(`/v1/queue/${c.model}`, mediaInput(c), { key });
      break;
    case "replicate-model":
      res = await s.post(`/v1/models/${c.model}/predictions`, { input: mediaInput(c) }, { key });
      break;
    case "replicate-version":
      res = await s.post("/v1/predictions", { version: c.model, input: mediaInput(c) }, { key });
      break;
    case "chat":
      res = await s.post(
        "/v1/chat/completions",
        {
          model: c.model,
          messages: [{ role: "user", content: PROMPT }],
          max_tokens: c.units * 8,
          ...(c.fail ? { sandbox: { fail: true } } : {}),
        },
        { key },
      );
      break;
    case "responses":
      res = await s.post(
        "/v1/responses",
        {
          model: c.model,
          input: PROMPT,
          max_output_tokens: c.units * 8,
          ...(c.fail ? { sandbox: { fail: true } } : {}),
        },
        { key },
      );
      break;
    case "anthropic":
      res = await s.post(
        "/v1/messages",
        {
          model: c.model,
          max_tokens: c.units * 8,
          messages: [{ role: "user", content: PROMPT }],
          ...(c.fail ? { sandbox: { fail: true } } : {}),
        },
        { key: null, headers: { "x-api-key": key, "anthropic-version": "2023-06-01" } },
      );
      break;
  }
  const body = (await res.json()) as Record<string, any>;
  // A text call whose upstream failed opened its job (FAILED, nothing charged): its id is in the error.
  const failedCall = res.status === 502 ? (body.request_id ?? body.error?.request_id) : undefined;
  if (failedCall) return { opened: String(failedCall) };
  if (res.status >= 400) return { refused: res.status, code: codeOf(c.door, body) };
  const id = String(body.request_id ?? body.id).replace(/^(chatcmpl-|resp_|msg_)/, "");
  return { opened: id };
}

const callArb: fc.Arbitrary<Call> = fc
  .record({
    media: fc.boolean(),
    pick: fc.nat(2),
    image: fc.boolean(),
    units: fc.integer({ min: 1, max: 3 }),
    fail: fc.nat(3).map((n) => n === 0), // one call in four is asked to fail
    key: fc.constantFrom<0 | 1>(0, 1),
  })
  .map(({ media, pick, image, units, fail, key }) => ({
    door: (media ? MEDIA_DOORS : TEXT_DOORS)[pick]!,
    model: media ? (image ? "sandbox/image" : "sandbox/speech") : "sandbox/chat",
    units,
    fail,
    key,
  }));

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
  for (const seed of propertySeeds(20261127, 1)) {
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
        if (c.model !== "sandbox/chat") {
          // The hold is the estimate of the same input, whatever the door.
          const est = (await (
            await s.post("/v1/estimate", { model_id: c.model, input: mediaInput(c) })
          ).json()) as { price_usd_micro: string };
          expect(String(hold)).toBe(est.price_usd_micro);
          if (r.status === "COMPLETED") expect(charge).toBe(hold);
          // Replicate's view of the same job agrees.
          const p = (await (await s.get(`/v1/predictions/${id}`)).json()) as Record<string, any>;
          expect(p.model).toBe(c.model);
          expect(p.input).toEqual(mediaInput(c));
          expect(p.status).toBe(
            { COMPLETED: "succeeded", FAILED: "failed", CANCELLED: "canceled" }[r.status as string],
          );
        }
        charges += charge;
      }

      const account = (await (await s.get("/v1/account")).json()) as {
        held_micro: string;
        balance_micro: string;
      };
      expect(account.held_micro).toBe("0");
      expect(BigInt(account.balance_micro)).toBe(80_000n - charges);
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
