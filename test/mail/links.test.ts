import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { admin } from "../admin/helpers.ts";
import { consoleApp, PASSWORD } from "../console/helpers.ts";
import { countRows } from "../helpers/backend.ts";
import { json } from "../helpers/context.ts";
import { type SmtpCapture, smtpCapture, smtpSettingsFor } from "../helpers/smtp.ts";
import { appSender } from "./helpers.ts";

let smtp: SmtpCapture;
beforeAll(async () => {
  smtp = await smtpCapture();
});
afterAll(() => smtp.close());

async function mailApp() {
  const t = await consoleApp();
  t.ctx.live = { ...t.ctx.live, smtp: smtpSettingsFor(smtp.port) };
  const sender = appSender(t.ctx);
  /** Sends what is queued; returns the messages the SMTP server got meanwhile. */
  const deliver = async () => {
    const before = smtp.mails.length;
    while ((await sender.runDue()) > 0) {}
    return smtp.mails.slice(before);
  };
  const queued = async (kind = "%") =>
    BigInt(await countRows(t.ctx.sql, "mail_outbox WHERE kind LIKE ?", [kind]));
  return { ...t, deliver, queued };
}

describe("links by email when [smtp] is set", () => {
  test("admin API invite and reset: mailed to the invite's email / the person's email, the same link", async () => {
    const t = await mailApp();
    const res = await t.request(
      "/admin/v1/users/invite",
      admin("POST", { email: " Ann@Example.com ", account_id: t.account.id, role: "owner" }),
    );
    const invite = await json<{ url: string; mailed: boolean }>(res);
    expect(res.status).toBe(201);
    expect(invite.mailed).toBe(true);
    const [m] = await t.deliver();
    expect(m!.to).toEqual(["ann@example.com"]);
    expect(m!.subject).toBe("Invite to default on gengate");
    expect(m!.decoded).toContain(invite.url);
    await t.people.signIn.acceptInvite(invite.url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });

    const reset = await json<{ url: string; mailed: boolean }>(
      await t.request("/admin/v1/users/reset-password", admin("POST", { email: "ANN@example.com" })),
    );
    expect(reset.mailed).toBe(true);
    const [r] = await t.deliver();
    expect(r!.to).toEqual(["ann@example.com"]);
    expect(r!.subject).toBe("Reset your gengate password");
    expect(r!.decoded).toContain(reset.url);
  });

  test("an invite without an email (the first-start invite) is not mailed to anyone", async () => {
    const t = await mailApp();
    const made = await t.people.invites.createInvite({ accountId: t.account.id, role: "owner" });
    expect(made.mailed).toBe(false);
    expect(await t.queued()).toBe(0n);
  });

  test("console: an owner's invite is mailed to the invited address and the page says so", async () => {
    const t = await mailApp();
    await t.person("owner@example.com", "owner");
    await t.deliver(); // the owner's own invite
    const b = await t.signedIn("owner@example.com");
    await b.page("/console/settings");
    // Post/redirect/get: the invite page the redirect leads to shows the link once.
    const res = await b.post("/console/settings/members/invite", {
      email: "New@Example.com",
      role: "member",
    });
    expect(res.status).toBe(303);
    const { text } = await b.page(res.headers.get("location")!);
    expect(text).toContain("It is also being emailed to that address.");
    const url = /value="(http:\/\/gengate\.test\/console\/invite\/[^"]+)"/.exec(text)![1]!;
    const [m] = await t.deliver();
    expect(m!.to).toEqual(["new@example.com"]);
    expect(m!.decoded).toContain(url);
  });

  test("console operator pages: invite and reset links are mailed too", async () => {
    const t = await mailApp();
    await t.person("op@example.com", "owner", true);
    await t.person("someone@example.com", "member");
    await t.deliver(); // their own invites
    const b = await t.signedIn("op@example.com");
    await b.page("/console/admin/people");
    const made = await b.post("/console/admin/invites", {
      email: "x@example.com",
      account: "",
      role: "member",
    });
    expect(made.status).toBe(303);
    const inv = (await b.page(made.headers.get("location")!)).text;
    expect(inv).toContain("It is also being emailed to that address.");
    const rst = await (await b.post("/console/admin/reset", { email: "someone@example.com" })).text();
    expect(rst).toContain("It is also being emailed to the person.");
    const sent = await t.deliver();
    expect(sent.map((m) => [m.to, m.subject])).toEqual([
      [["x@example.com"], "Your gengate invite"],
      [["someone@example.com"], "Reset your gengate password"],
    ]);
  });

  test("forgot password: a known email gets a link; an unknown one gets the very same page and no mail", async () => {
    const t = await mailApp();
    await t.person("known@example.com", "member");
    await t.deliver(); // their own invite
    const b = t.browser();
    const known = await b.post("/console/forgot", { email: "  KNOWN@example.com " });
    const unknown = await b.post("/console/forgot", { email: "nobody@example.com" });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    const [a, c] = [await known.text(), await unknown.text()];
    expect(a).toBe(c);
    expect(a).toContain("If an account uses that email, a reset link is on its way to it.");
    const sent = await t.deliver();
    expect(sent.map((m) => m.to)).toEqual([["known@example.com"]]);
    const url = /(http:\/\/gengate\.test\/console\/reset\/[A-Za-z0-9_-]+)/.exec(sent[0]!.decoded)![1]!;
    expect(await t.people.resets.resetLinkValid(url.split("/").pop()!)).toBe(true);
  });

  test("forgot password cannot flood a mailbox: at most 3 links an hour per person", async () => {
    const t = await mailApp();
    await t.person("flood@example.com", "member");
    const b = t.browser();
    for (let i = 0; i < 6; i++)
      expect((await b.post("/console/forgot", { email: "flood@example.com" })).status).toBe(200);
    expect(await t.queued("password_reset")).toBe(3n);
  });
});

describe("without [smtp] nothing is mailed and nothing breaks", () => {
  test("invites and resets still give their links (mailed: false); forgot creates nothing; nothing is queued", async () => {
    const t = await consoleApp();
    expect(t.ctx.live.smtp).toBeNull();
    const invite = await json<{ url: string; mailed: boolean }>(
      await t.request("/admin/v1/users/invite", admin("POST", { email: "a@example.com" })),
    );
    expect(invite.mailed).toBe(false);
    expect(invite.url).toStartWith("http://gengate.test/console/invite/");
    await t.person("owner@example.com", "owner");
    const b = await t.signedIn("owner@example.com");
    await b.page("/console/settings");
    const made = await b.post("/console/settings/members/invite", { email: "m@example.com", role: "member" });
    expect(made.status).toBe(303);
    const { text } = await b.page(made.headers.get("location")!);
    expect(text).toContain("This server sends no email: copy the link now");
    const forgot = await (await t.browser().post("/console/forgot", { email: "owner@example.com" })).text();
    expect(forgot).toContain("This server does not send email.");
    expect(await countRows(t.ctx.sql, "password_resets")).toBe(0);
    expect(await countRows(t.ctx.sql, "mail_outbox")).toBe(0);
  });
});
