// The random job mix of the one-source-of-truth tests (test/ledger/one-source-of-truth.property.test.ts
// at service level, test/console/console-truth.test.ts at page level): cases, and a run of them
// through the real submit, worker, chat and cancel paths on a USD and a RUB account.
import { expect } from "bun:test";
import fc from "fast-check";
import { MICRO } from "../../src/lib/money.ts";
import { pollUntil } from "../helpers/api.ts";
import { json, makeTestApp, testWorkerPool } from "../helpers/context.ts";

export type Outcome = "complete" | "partial" | "fail" | "cancel";
export interface Case {
  account: 0 | 1;
  key: number;
  model: "sandbox/image" | "sandbox/speech" | "sandbox/video" | "sandbox/chat";
  outcome: Outcome;
  /** Days the clock moves forward before this job settles, then seconds into that day. */
  days: number;
  second: number;
}

export const caseArb: fc.Arbitrary<Case> = fc.record({
  account: fc.constantFrom(0 as const, 1 as const),
  key: fc.nat(2),
  model: fc.constantFrom(
    "sandbox/image" as const,
    "sandbox/speech" as const,
    "sandbox/video" as const,
    "sandbox/chat" as const,
  ),
  outcome: fc.constantFrom<Outcome>("complete", "complete", "partial", "fail", "cancel"),
  days: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 10, max: 40 })),
  second: fc.integer({ min: 0, max: 86_399 }),
});

export function mediaInput(c: Case): Record<string, unknown> {
  const sandbox =
    c.outcome === "fail"
      ? { sandbox: { fail: true } }
      : c.outcome === "partial"
        ? { sandbox: { actual_units: 1 } }
        : {};
  switch (c.model) {
    case "sandbox/image":
      return { prompt: "p", num_images: 3, width: 64, height: 64, ...sandbox };
    case "sandbox/video":
      return { prompt: "p", duration: 3, resolution: "480p", ...sandbox };
    default:
      return { text: "hello", duration: 4, ...sandbox };
  }
}

/** "12.5" -> 12500000n, for checking the CSV's decimal column against its micro column. */
export function decimalMicro(text: string): bigint {
  const [whole, frac = ""] = text.split(".");
  return BigInt(whole!) * MICRO + BigInt(frac.padEnd(6, "0"));
}

export function sumBy<T>(items: T[], key: (x: T) => string, value: (x: T) => bigint): Map<string, bigint> {
  const m = new Map<string, bigint>();
  for (const x of items) m.set(key(x), (m.get(key(x)) ?? 0n) + value(x));
  return m;
}

export const lastDayOf = (month: string) => {
  const [y, m] = month.split("-").map(Number);
  return new Date(Date.UTC(y!, m!, 0)).toISOString().slice(0, 10);
};

export async function runCases(cases: Case[]) {
  let clock = Date.UTC(2026, 0, 27, 12) / 1000;
  const t = await makeTestApp({ now: () => clock });
  const { ctx } = t;
  await ctx.fx.set("RUB", 92_345_678n, "test");
  const rub = await ctx.accounts.createAccount("rub", "RUB");
  const accounts = [
    { id: t.account.id, keys: [t.key] },
    { id: rub.account.id, keys: [rub.key] },
  ];
  for (const a of accounts) {
    await ctx.ledger.topUp(a.id, 1_000_000n * MICRO, "start");
    for (let i = 0; i < 2; i++) {
      const { key } = await ctx.accounts.createKey(a.id, { name: i === 0 ? "=HYPERLINK(1)" : "ci, nightly" });
      a.keys.push(key);
    }
  }
  const submit = async (c: Case): Promise<string> => {
    const key = accounts[c.account]!.keys[c.key]!;
    const res = await t.request(`/v1/queue/${c.model}`, {
      method: "POST",
      key,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(mediaInput(c)),
    });
    const body = await json(res);
    if (res.status !== 202) throw new Error(`submit: ${res.status} ${JSON.stringify(body)}`);
    return body.request_id as string;
  };

  // Cancelled jobs: submitted and cancelled while no worker runs.
  for (const c of cases.filter((x) => x.outcome === "cancel" && x.model !== "sandbox/chat")) {
    clock += c.days * 86_400;
    const id = await submit(c);
    const key = accounts[c.account]!.keys[c.key]!;
    const res = await t.request(`/v1/requests/${id}/cancel`, { method: "POST", key });
    expect(res.status).toBe(200);
  }
  // The rest, one at a time, each settling at its own instant of the injected clock.
  const pool = testWorkerPool(ctx, { concurrency: () => 1 });
  try {
    let n = 0;
    for (const c of cases.filter((x) => x.outcome !== "cancel" || x.model === "sandbox/chat")) {
      clock = Math.floor(clock / 86_400) * 86_400 + c.days * 86_400 + c.second;
      if (++n % 5 === 0) await ctx.ledger.adjust(accounts[c.account]!.id, -MICRO, "correction");
      const key = accounts[c.account]!.keys[c.key]!;
      if (c.model === "sandbox/chat") {
        const res = await t.request("/v1/chat/completions", {
          method: "POST",
          key,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            model: "sandbox/chat",
            messages: [{ role: "user", content: "tell me a story" }],
            max_tokens: 1 + (c.second % 40),
            ...(c.outcome === "fail" ? { sandbox: { fail: true } } : {}),
          }),
        });
        expect([200, 502]).toContain(res.status);
        continue;
      }
      const id = await submit(c);
      await pollUntil(
        async () => (await ctx.jobs.get(id))!,
        (j) => j.status === "COMPLETED" || j.status === "FAILED",
        20_000,
      );
    }
  } finally {
    await pool.stop(1000);
  }
  return { t, accounts, now: () => clock };
}
