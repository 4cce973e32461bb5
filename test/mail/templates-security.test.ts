import { describe, expect, test } from "bun:test";
import { Mailer } from "../../src/mail/mailer.ts";
import { balanceLowMessage, inviteMessage, passwordResetMessage } from "../../src/mail/templates.ts";
import { smtpSettingsFor } from "../helpers/smtp.ts";
import { mailFixture } from "./helpers.ts";

const EVIL = `<script>alert("x")</script> & "quotes" 'single'`;

describe("mail templates escape every value in HTML", () => {
  test("an account name with markup is text in the HTML body", () => {
    const m = balanceLowMessage({
      accountName: EVIL,
      accountId: "acct_x",
      currency: "USD",
      balanceMicro: 10_000_000n,
      heldMicro: 6_000_000n,
      thresholdMicro: 5_000_000n,
      billingUrl: 'https://gengate.test/console/billing?"><script>',
    });
    expect(m.html).not.toContain("<script>");
    expect(m.html).toContain(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot; &#39;single&#39;",
    );
    expect(m.html).toContain('href="https://gengate.test/console/billing?&quot;&gt;&lt;script&gt;"');
    expect(m.text).toContain("Available: 4.00 USD");
    const invite = inviteMessage({
      url: "https://g.test/console/invite/t",
      expiresAt: 0,
      accountName: EVIL,
      role: "owner",
    });
    expect(invite.html).not.toContain("<script>");
    expect(passwordResetMessage('https://g.test/console/reset/"<b>').html).not.toContain('"<b>');
  });

  test("a subject cannot carry a header break (an account name with CR/LF)", async () => {
    const f = mailFixture({ settings: () => smtpSettingsFor(25) });
    const mailer = new Mailer(f.outbox, () => smtpSettingsFor(25));
    const m = balanceLowMessage({
      accountName: "acme\r\nBcc: victim@example.com",
      accountId: "acct_x",
      currency: "USD",
      balanceMicro: 0n,
      heldMicro: 0n,
      thresholdMicro: 1n,
      billingUrl: "https://g.test/console/billing",
    });
    expect(await mailer.queue(f.sql, "balance_low", ["o@example.com"], m)).toBe(true);
    const [row] = await f.outbox.claimDue(Date.now() + 1e9, 1, 1000);
    expect(row!.subject).not.toMatch(/[\r\n]/);
    expect(row!.subject).toContain("acme Bcc: victim@example.com");
  });

  test("without [smtp] the mailer queues nothing", async () => {
    const f = mailFixture({ settings: () => null });
    const mailer = new Mailer(f.outbox, () => null);
    expect(
      await mailer.queue(f.sql, "invite", ["a@example.com"], passwordResetMessage("https://g.test/x")),
    ).toBe(false);
    expect(await f.outbox.counts()).toEqual({ pending: 0, sent: 0, failed: 0 });
  });
});
