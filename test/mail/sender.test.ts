import { afterEach, describe, expect, test } from "bun:test";
import type { SmtpSettings } from "../../src/config/schema.ts";
import { type SmtpCapture, smtpCapture, smtpSettingsFor } from "../helpers/smtp.ts";
import { waitFor } from "../webhooks/helpers.ts";
import { MESSAGE, mailFixture } from "./helpers.ts";

const open: SmtpCapture[] = [];
async function capture(options: Parameters<typeof smtpCapture>[0] = {}) {
  const c = await smtpCapture(options);
  open.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe("mail sender", () => {
  test("sends a queued message (text and HTML) to its recipients, then empties the stored bodies", async () => {
    const smtp = await capture();
    const f = mailFixture({ settings: () => smtpSettingsFor(smtp.port) });
    const id = await f.outbox.enqueue("invite", ["a@example.com", "b@example.com"], MESSAGE);
    expect(await f.sender.runDue()).toBe(1);
    expect(smtp.mails).toHaveLength(1);
    const m = smtp.mails[0]!;
    expect(m.to).toEqual(["a@example.com", "b@example.com"]);
    expect(m.from).toBe("billing@gengate.test");
    expect(m.subject).toBe("Hello");
    expect(m.decoded).toContain("Plain body https://gengate.test/x");
    expect(m.decoded).toContain("<p>HTML body</p>");
    expect(m.secure).toBe(false);
    const r = f.row(id);
    expect([r.status, r.attempts, r.text_body, r.html_body]).toEqual(["sent", 1n, "", ""]);
    expect(await f.sender.runDue()).toBe(0);
  });

  for (const tls of ["starttls", "tls"] as const) {
    test(`tls = "${tls}": encrypted, the certificate verified, AUTH accepted`, async () => {
      const auth = { user: "mailer", pass: "s3cret pass" };
      const smtp = await capture({ tls, auth });
      const f = mailFixture({ settings: () => smtpSettingsFor(smtp.port, tls, auth) });
      await f.outbox.enqueue("password_reset", ["p@example.com"], MESSAGE);
      await f.sender.runDue();
      expect(smtp.mails.map((m) => [m.secure, m.user])).toEqual([[true, "mailer"]]);
    });
  }

  test('tls = "starttls" against a server without STARTTLS: refused, nothing goes out in clear', async () => {
    const smtp = await capture({ tls: "none" });
    const f = mailFixture({ settings: () => smtpSettingsFor(smtp.port, "starttls") });
    const id = await f.outbox.enqueue("invite", ["a@example.com"], MESSAGE);
    await f.sender.runDue();
    expect(smtp.mails).toHaveLength(0);
    expect(f.row(id).status).toBe("pending");
    expect(f.row(id).last_error).toMatch(/STARTTLS/i);
  });

  test("an untrusted certificate is refused (no silent downgrade)", async () => {
    const smtp = await capture({ tls: "tls" });
    const f = mailFixture({
      settings: () => smtpSettingsFor(smtp.port, "tls"),
      // The default transport: the system store only, which does not know the test certificate.
      transportFor: undefined,
    });
    const id = await f.outbox.enqueue("invite", ["a@example.com"], MESSAGE);
    await f.sender.runDue();
    expect(smtp.mails).toHaveLength(0);
    expect(f.row(id).status).toBe("pending");
  });

  test("a wrong password is retried (the operator may fix it), not given up", async () => {
    const smtp = await capture({ auth: { user: "u", pass: "right" } });
    const f = mailFixture({
      settings: () => smtpSettingsFor(smtp.port, "none", { user: "u", pass: "wrong" }),
    });
    const id = await f.outbox.enqueue("invite", ["a@example.com"], MESSAGE);
    await f.sender.runDue();
    expect(f.row(id).status).toBe("pending");
    expect(f.row(id).last_error).toMatch(/535|auth|invalid/i);
  });

  test("SMTP down, then up: retried after the back-off, sent once it answers", async () => {
    const first = await smtpCapture();
    const port = first.port;
    await first.close(); // nothing listens on the port now
    const f = mailFixture({ settings: () => smtpSettingsFor(port), schedule: [30_000, 120_000] });
    const id = await f.outbox.enqueue("balance_low", ["o@example.com"], MESSAGE);
    expect(await f.sender.runDue()).toBe(1);
    expect(f.row(id).status).toBe("pending");
    expect(f.row(id).attempts).toBe(1n);
    expect(f.row(id).last_error).toMatch(/ECONNREFUSED|connect/i);
    // Not due before the back-off.
    expect(await f.sender.runDue()).toBe(0);
    f.clock.advance(30_000);
    const smtp = await capture({ port });
    expect(await f.sender.runDue()).toBe(1);
    expect(f.row(id).status).toBe("sent");
    expect(smtp.mails).toHaveLength(1);
  });

  test("a temporary refusal (4xx) is retried; a permanent one (5xx) gives up at once with the reason", async () => {
    const smtp = await capture({
      answer: (n) =>
        n === 1
          ? { code: 451, message: "try later" }
          : n === 2
            ? { code: 550, message: "no such mailbox" }
            : null,
    });
    const f = mailFixture({ settings: () => smtpSettingsFor(smtp.port), schedule: [1000] });
    const id = await f.outbox.enqueue("invite", ["a@example.com"], MESSAGE);
    await f.sender.runDue();
    expect([f.row(id).status, f.row(id).last_error]).toEqual(["pending", expect.stringMatching(/451/)]);
    f.clock.advance(1000);
    await f.sender.runDue();
    const r = f.row(id);
    expect(r.status).toBe("failed");
    expect(r.last_error).toMatch(/^refused by the mail server: .*550/);
    expect([r.text_body, r.html_body]).toEqual(["", ""]);
  });

  test("gives up after the schedule, recording why", async () => {
    const smtp = await capture({ answer: () => ({ code: 421, message: "busy" }) });
    const f = mailFixture({ settings: () => smtpSettingsFor(smtp.port), schedule: [10, 10] });
    const id = await f.outbox.enqueue("invite", ["a@example.com"], MESSAGE);
    for (let i = 0; i < 3; i++) {
      await f.sender.runDue();
      f.clock.advance(10);
    }
    const r = f.row(id);
    expect([r.status, r.attempts]).toEqual(["failed", 3n]);
    expect(r.last_error).toMatch(/^gave up after 3 attempts: .*421/);
    expect(await f.sender.runDue()).toBe(0);
    expect(await f.outbox.counts()).toEqual({ pending: 0, sent: 0, failed: 1 });
  });

  test("without [smtp] the sender claims nothing (rows wait); a reload that adds it sends them", async () => {
    const smtp = await capture();
    let settings: SmtpSettings | null = null;
    const f = mailFixture({ settings: () => settings });
    const id = await f.outbox.enqueue("invite", ["a@example.com"], MESSAGE);
    expect(await f.sender.runDue()).toBe(0);
    settings = smtpSettingsFor(smtp.port);
    expect(await f.sender.runDue()).toBe(1);
    expect(f.row(id).status).toBe("sent");
  });

  test("the loop sends on wake and stops cleanly; a leased row is not sent twice", async () => {
    const smtp = await capture();
    const f = mailFixture({ settings: () => smtpSettingsFor(smtp.port), maxSleepMs: 50 });
    await f.sender.start();
    await f.outbox.enqueue("invite", ["a@example.com"], MESSAGE);
    f.sender.wake();
    await waitFor("the mail", () => smtp.mails.length === 1, 10_000);
    await f.outbox.enqueue("invite", ["b@example.com"], MESSAGE);
    f.sender.wake();
    await waitFor("the second mail", () => smtp.mails.length === 2, 10_000);
    await f.sender.stop();
    await f.outbox.enqueue("invite", ["c@example.com"], MESSAGE);
    f.sender.wake(); // stopped: no-op
    await Bun.sleep(100);
    expect(smtp.mails.map((m) => m.to[0])).toEqual(["a@example.com", "b@example.com"]);
    // A second sender over the same outbox cannot take a row while its lease runs.
    const leased = await f.outbox.claimDue(f.clock.now(), 10, 60_000);
    expect(leased).toHaveLength(1);
    expect(await f.outbox.claimDue(f.clock.now(), 10, 60_000)).toHaveLength(0);
  });
});
