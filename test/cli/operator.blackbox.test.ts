import { afterAll, describe, expect, test } from "bun:test";
import { runGengate, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
afterAll(() => server?.cleanup());

describe("operator CLI against a running server's data dir", () => {
  test("account create / credit, key create and fx set, seen by the server at once", async () => {
    server = await startServer();
    const dd = ["--data-dir", server.dataDir];
    const created = await runGengate([
      "account",
      "create",
      "--name",
      "acme",
      "--currency",
      "RUB",
      "--credit",
      "250.75",
      "--json",
      ...dd,
    ]);
    expect(created.code).toBe(0);
    const { account_id, key } = JSON.parse(created.stdout) as { account_id: string; key: string };
    expect(key).toMatch(/^gk_/);

    const fx = await runGengate(["fx", "set", "RUB", "92.5", "--json", ...dd]);
    expect(fx.code).toBe(0);
    expect(JSON.parse(fx.stdout).rate_micro).toBe("92500000");

    const credit = await runGengate(["account", "credit", account_id, "0.25", "--json", ...dd]);
    expect(credit.code).toBe(0);
    const account = (await (await server.fetch("/v1/account", { key })).json()) as {
      balance_micro: string;
      currency: string;
    };
    expect(account).toMatchObject({ balance_micro: "251000000", currency: "RUB" });

    const est = (await (
      await server.fetch("/v1/estimate", {
        key,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model_id: "sandbox/image", input: { num_images: 1 } }),
      })
    ).json()) as { price_rub_micro: string };
    expect(est.price_rub_micro).toBe("925000");

    const k = await runGengate([
      "key",
      "create",
      "--account",
      account_id,
      "--name",
      "ci",
      "--monthly-limit",
      "10",
      "--json",
      ...dd,
    ]);
    expect(k.code).toBe(0);
    const newKey = JSON.parse(k.stdout).key as string;
    expect((await server.fetch("/v1/account", { key: newKey })).status).toBe(200);

    // An adjustment is signed and needs a reason; every ADMIN entry records one.
    const adj = await runGengate([
      "account",
      "adjust",
      account_id,
      "-1.25",
      "--reason",
      "goodwill fix",
      "--json",
      ...dd,
    ]);
    expect(adj.code).toBe(0);
    expect(JSON.parse(adj.stdout).balance_micro).toBe("249750000");
    const wallet = (await (await server.fetch("/v1/account/ledger", { key })).json()) as {
      data: { kind: string; label: string; reason: string | null; balance_delta_micro: string }[];
    };
    const admin = wallet.data.filter((e) => e.label === "ADMIN");
    expect(admin.map((e) => [e.kind, e.balance_delta_micro, e.reason])).toEqual([
      ["adjustment", "-1250000", "goodwill fix"],
      ["topup", "250000", "credit from the CLI"],
      ["topup", "250750000", "initial credit"],
    ]);
  });

  test.each([
    [["account", "credit", "acct_nope00000000", "5"], /No account acct_nope00000000/],
    [["account", "credit", "x", "-5"], /AMOUNT must be a decimal above 0/],
    [["account", "credit", "x", "1.0000001"], /AMOUNT must be a decimal/],
    [["account", "credit", "x", "12,50"], /AMOUNT must be a decimal/],
    [["account", "adjust", "x", "-5"], /usage: gengate account adjust/],
    [["account", "adjust", "acct_nope00000000", "-5", "--reason", "r"], /No account acct_nope00000000/],
    [["account", "adjust", "x", "0", "--reason", "r"], /AMOUNT must be a signed decimal/],
    [["account", "adjust", "x", "1.0000001", "--reason", "r"], /AMOUNT must be a signed decimal/],
    [["account", "adjust", "x", "-5", "--reason", " "], /needs a reason/],
    [["account", "create", "--name", "z", "--currency", "EUR"], /--currency must be USD or RUB/],
    [["account", "create"], /needs --name/],
    [["fx", "set", "RUB", "-1"], /rate must be a decimal/],
    [["fx", "set", "EUR", "1"], /currency must be RUB/],
    [["key", "create"], /needs --account/],
  ])("%p fails with a clear message and changes nothing", async (args, pattern) => {
    const before = (await (await server.fetch("/v1/account")).json()) as { balance_micro: string };
    const r = await runGengate([...args, "--data-dir", server.dataDir]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(pattern);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    const after = (await (await server.fetch("/v1/account")).json()) as { balance_micro: string };
    expect(after.balance_micro).toBe(before.balance_micro);
  });

  test("a missing data dir is a clear error", async () => {
    const r = await runGengate(["account", "list", "--data-dir", "/nonexistent/gengate"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("no database at /nonexistent/gengate/gengate.db");
  });
});
