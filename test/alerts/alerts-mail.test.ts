import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { consoleApp } from "../console/helpers.ts";
import { countRows } from "../helpers/backend.ts";
import { type SmtpCapture, smtpCapture, smtpSettingsFor } from "../helpers/smtp.ts";
import { reserveUsd } from "../ledger/ledger-helpers.ts";
import { appSender } from "../mail/helpers.ts";
import { mailRows, USD } from "./helpers.ts";

let smtp: SmtpCapture;
beforeAll(async () => {
  smtp = await smtpCapture();
});
afterAll(() => smtp.close());

describe("low-balance alert email", () => {
  test("ONE email to the account's owners (not members, not other accounts), once per fall", async () => {
    const t = await consoleApp();
    await t.person("owner1@example.com", "owner");
    await t.person("owner2@example.com", "owner");
    await t.person("member@example.com", "member");
    t.ctx.live = { ...t.ctx.live, smtp: smtpSettingsFor(smtp.port) };
    const other = (await t.ctx.accounts.createAccount("other", "USD")).account.id;
    await t.ctx.ledger.topUp(t.account.id, USD(10), "credit");
    await t.ctx.ledger.topUp(other, USD(10), "credit");
    await t.ctx.accounts.setAlertThreshold(t.account.id, USD(5));
    await t.ctx.accounts.setAlertThreshold(other, USD(5));
    await reserveUsd(t.ctx.ledger, t.account.id, USD(6));
    await reserveUsd(t.ctx.ledger, t.account.id, USD(1));
    const rows = await mailRows(t.ctx.sql, "balance_low");
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.to_addrs).sort()).toEqual(["owner1@example.com", "owner2@example.com"]);
    const before = smtp.mails.length;
    const sender = appSender(t.ctx);
    await sender.runDue();
    const sent = smtp.mails.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.to.sort()).toEqual(["owner1@example.com", "owner2@example.com"]);
    expect(sent[0]!.subject).toBe("Low balance on default: 4.00 USD available");
    expect(sent[0]!.decoded).toContain("Threshold: 5.00 USD");
    expect(sent[0]!.decoded).toContain("http://gengate.test/console/billing");
    // The alert went without a URL: no webhook row, the email alone.
    expect(await countRows(t.ctx.sql, "webhook_deliveries")).toBe(0);
  });

  test("without [smtp]: the alert disarms and sends its webhook only; no mail row", async () => {
    const t = await consoleApp();
    await t.person("owner@example.com", "owner");
    await t.ctx.ledger.topUp(t.account.id, USD(10), "credit");
    await t.ctx.accounts.setAlertThreshold(t.account.id, USD(5));
    await t.ctx.alerts.setUrl(t.account.id, "https://hooks.example.com/low");
    await reserveUsd(t.ctx.ledger, t.account.id, USD(6));
    expect(await mailRows(t.ctx.sql)).toHaveLength(0);
    expect(await countRows(t.ctx.sql, "webhook_deliveries")).toBe(1);
  });
});
