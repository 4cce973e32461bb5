/**
 * The low-balance alert through a real process (CI reruns this file against the compiled binary):
 * settings saved in the console, money moved by the API and an operator command, the webhook
 * verified with the account's secret by a local receiver, the email captured by a local SMTP server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyWebhook } from "../../src/webhooks/signing.ts";
import { runGengate, startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { type SmtpCapture, smtpCapture } from "../helpers/smtp.ts";
import { receiver, waitFor } from "../webhooks/helpers.ts";

let server: TestServer;
let smtp: SmtpCapture;
const hooks = receiver();
let cookie = "";
let csrf = "";
let accountId = "";

async function form(path: string, fields: Record<string, string>) {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      origin: new URL(server.url).origin,
      "content-type": "application/x-www-form-urlencoded",
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams({ ...fields, ...(csrf ? { csrf } : {}) }).toString(),
  });
}

async function submitJob() {
  const res = await server.fetch("/v1/queue/sandbox/image", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "a lighthouse" }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { request_id: string }).request_id;
}

beforeAll(async () => {
  smtp = await smtpCapture();
  const dir = tempDir();
  const config = join(dir, "gengate.toml");
  writeFileSync(
    config,
    `[webhooks]\nallow_private_cidrs = ["127.0.0.0/8"]\n\n[smtp]\nhost = "127.0.0.1"\nport = ${smtp.port}\ntls = "none"\nfrom = "gengate <billing@gengate.test>"\n`,
  );
  server = await startServer({ args: ["--config", config] });
  // The first start's owner invite: set a password, signed in.
  const invite = new URL(server.ownerInvite!).pathname;
  const accepted = await form(invite, { email: "owner@example.com", password: "a long enough password" });
  expect(accepted.status).toBe(303);
  cookie = /^(gengate_session=[^;]+)/.exec(accepted.headers.get("set-cookie") ?? "")![1]!;
  const page = await (await fetch(`${server.url}/console/settings`, { headers: { cookie } })).text();
  csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1]!;
  accountId = ((await (await server.fetch("/v1/account")).json()) as { id: string }).id;
});

afterAll(async () => {
  server?.cleanup();
  hooks.stop();
  await smtp?.close();
});

describe("low-balance alert (black box)", () => {
  test("a private alert URL is refused unless the operator allows it; here 127.0.0.0/8 is allowed", async () => {
    const refused = await form("/console/settings/alert-url", { alert_url: "http://169.254.169.254/x" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("only public addresses are accepted");
    const saved = await form("/console/settings/alert-url", { alert_url: hooks.url("/low") });
    expect(saved.status).toBe(303);
  });

  test("one signed webhook and one email when a submit takes the balance below; none for the next", async () => {
    const credit = await runGengate(["account", "credit", accountId, "1", "--data-dir", server.dataDir]);
    expect(credit.code).toBe(0);
    expect((await form("/console/settings/alert-threshold", { threshold: "1" })).status).toBe(303);
    await submitJob(); // 1.00 - 0.01 held: below 1.00
    await waitFor("the alert webhook", () => hooks.count("/low") === 1, 20_000);
    const hit = hooks.hits.find((h) => h.path === "/low")!;
    const secret = ((await (await server.fetch("/v1/account/webhook-secret")).json()) as { secret: string })
      .secret;
    expect(() => verifyWebhook(secret, hit.headers, hit.body)).not.toThrow();
    const body = JSON.parse(hit.body);
    expect(body.event).toBe("BALANCE_LOW");
    expect(body.account_id).toBe(accountId);
    expect([body.currency, body.balance_micro, body.threshold_micro]).toEqual(["USD", "1000000", "1000000"]);
    expect(BigInt(body.available_micro)).toBeLessThan(1_000_000n);
    await waitFor("the alert email", () => smtp.mails.length === 1, 40_000);
    expect(smtp.mails[0]!.to).toEqual(["owner@example.com"]);
    expect(smtp.mails[0]!.subject).toStartWith("Low balance on default:");

    await submitJob();
    await submitJob();
    await Bun.sleep(1500);
    expect(hooks.count("/low")).toBe(1);
    expect(smtp.mails).toHaveLength(1);
  });

  test("an operator credit above re-arms; the next fall alerts again", async () => {
    // Wait for the jobs to settle, then credit exactly up to the threshold (available = 1.00).
    let account = { available_micro: "0", held_micro: "1" };
    for (const end = Date.now() + 20_000; account.held_micro !== "0" && Date.now() < end; await Bun.sleep(50))
      account = (await (await server.fetch("/v1/account")).json()) as typeof account;
    expect(account.held_micro).toBe("0");
    const missing = 1_000_000 - Number(account.available_micro);
    const amount = `0.${String(missing).padStart(6, "0")}`;
    const credit = await runGengate(["account", "credit", accountId, amount, "--data-dir", server.dataDir]);
    expect(credit.code).toBe(0);
    await submitJob();
    await waitFor("the second alert", () => hooks.count("/low") === 2, 40_000);
    const ids = hooks.hits.filter((h) => h.path === "/low").map((h) => h.headers.get("webhook-id"));
    expect(new Set(ids).size).toBe(2);
  });
});
