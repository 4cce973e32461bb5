import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runGengate, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let dd: string[];
beforeAll(async () => {
  server = await startServer();
  dd = ["--data-dir", server.dataDir];
});
afterAll(() => server?.cleanup());

type Batch = {
  id: string;
  count: number;
  redeemed: number;
  unused: number;
  revoked: number;
  amount_micro: string;
};

async function cli(args: string[]) {
  const r = await runGengate([...args, ...dd]);
  if (r.code !== 0) throw new Error(`gengate ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r;
}

const redeem = (code: string) =>
  server.fetch("/v1/account/redeem", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });

describe("gengate code", () => {
  test("create --json, redeem on the running server, list, revoke", async () => {
    const made = JSON.parse(
      (
        await cli([
          "code",
          "create",
          "--amount",
          "3.25",
          "--currency",
          "usd",
          "--count",
          "3",
          "--expires",
          "2099-12-31",
          "--note",
          "ci",
          "--json",
        ])
      ).stdout,
    ) as { codes: string[]; batch_id: string; batch: Batch & { expires_at: string; note: string } };
    expect(made.codes).toHaveLength(3);
    for (const c of made.codes) expect(c).toMatch(/^[2-9A-HJ-NP-Z]{5}(-[2-9A-HJ-NP-Z]{5}){3}$/);
    expect(made.batch_id).toMatch(/^rbatch_/);
    expect(made.batch).toMatchObject({
      amount_micro: "3250000",
      count: 3,
      note: "ci",
      expires_at: "2100-01-01T00:00:00Z",
    });

    const res = await redeem(made.codes[0]!);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { redeemed: { amount_micro: string } }).redeemed.amount_micro).toBe(
      "3250000",
    );

    const list = JSON.parse((await cli(["code", "list", "--json"])).stdout) as { data: Batch[] };
    expect(list.data.find((b) => b.id === made.batch_id)).toMatchObject({ redeemed: 1, unused: 2 });
    const human = (await cli(["code", "list"])).stdout;
    expect(human).toContain(made.batch_id);
    expect(human).toContain("redeemed 1, unused 2");
    expect(human).not.toContain(made.codes[1]!);

    const revoked = (await cli(["code", "revoke", made.batch_id])).stdout;
    expect(revoked).toContain("2 unused code(s) revoked");
    // Revoked from the CLI: the server refuses the code at once.
    const refused = await redeem(made.codes[1]!);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("invalid_code");
  });

  test("without --json: the codes, one a line, then a summary", async () => {
    const out = (await cli(["code", "create", "--amount", "1", "--currency", "RUB", "--count", "2"])).stdout;
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^[2-9A-HJ-NP-Z-]{23}$/);
    expect(lines[2]).toContain("2 code(s) of 1.00 RUB");
  });

  test("bad input: exit 2 with the flag named; unknown batch: exit 1", async () => {
    const cases: [string[], RegExp][] = [
      [["code", "create", "--currency", "USD"], /--amount/],
      [["code", "create", "--amount", "1"], /--currency/],
      [["code", "create", "--amount", "0", "--currency", "USD"], /--amount/],
      [["code", "create", "--amount", "1", "--currency", "EUR"], /--currency/],
      [["code", "create", "--amount", "1", "--currency", "USD", "--count", "1001"], /--count/],
      [["code", "create", "--amount", "1", "--currency", "USD", "--expires", "2001-01-01"], /--expires/],
      [["code", "create", "--amount", "1", "--currency", "USD", "--bogus"], /unknown option/],
      [["code", "revoke"], /usage/],
      [["code"], /usage/],
    ];
    for (const [args, message] of cases) {
      const r = await runGengate([...args, ...dd]);
      expect(`${args.join(" ")} -> ${r.code}`).toBe(`${args.join(" ")} -> 2`);
      expect(r.stderr).toMatch(message);
    }
    const unknown = await runGengate(["code", "revoke", "rbatch_nonexistent00000", ...dd]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("No code batch");
  }, 60_000);
});
