import { describe, expect, test } from "bun:test";
import { consoleApp } from "../console/helpers.ts";
import { LOOPBACK_ALLOWED } from "../webhooks/helpers.ts";

async function owner() {
  const t = await consoleApp();
  await t.person("owner@example.com", "owner");
  await t.person("member@example.com", "member");
  const b = await t.signedIn("owner@example.com");
  await b.page("/console/settings");
  const url = async () => (await t.ctx.accounts.getAccount(t.account.id))!.alert_url;
  return { ...t, b, url };
}

describe("alert URL in settings: who and what", () => {
  test("an owner saves a public URL, and clears it", async () => {
    const t = await owner();
    const res = await t.b.post("/console/settings/alert-url", { alert_url: "https://93.184.215.14/hook" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/settings?done=alert-url");
    expect(await t.url()).toBe("https://93.184.215.14/hook");
    const page = await t.b.page("/console/settings?done=alert-url");
    expect(page.text).toContain("The alert URL is saved.");
    expect(page.text).toContain('value="https://93.184.215.14/hook"');
    await t.b.post("/console/settings/alert-url", { alert_url: "" });
    expect(await t.url()).toBeNull();
  });

  test("private, loopback and metadata addresses are refused (the job webhooks' SSRF policy), nothing saved", async () => {
    const t = await owner();
    for (const bad of [
      "http://127.0.0.1:8080/x",
      "http://169.254.169.254/latest/meta-data",
      "http://10.0.0.5/hook",
      "http://[::ffff:127.0.0.1]/x",
      "http://0x7f.1/x",
      "ftp://93.184.215.14/x",
      "https://user:pw@93.184.215.14/x",
      "not a url",
    ]) {
      const res = await t.b.post("/console/settings/alert-url", { alert_url: bad });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("The alert URL");
      expect(await t.url()).toBeNull();
    }
    // The operator's allowed private blocks apply here as for job webhooks.
    t.ctx.live = { ...t.ctx.live, webhooks: LOOPBACK_ALLOWED };
    expect(
      (await t.b.post("/console/settings/alert-url", { alert_url: "http://127.0.0.1:9/x" })).status,
    ).toBe(303);
    expect(await t.url()).toBe("http://127.0.0.1:9/x");
  });

  test("the typed value is shown back escaped", async () => {
    const t = await owner();
    const res = await t.b.post("/console/settings/alert-url", {
      alert_url: 'http://10.0.0.1/"><script>x</script>',
    });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(text).not.toContain("<script>x</script>");
    expect(text).toContain("&quot;&gt;&lt;script&gt;");
  });

  test("members may not set it (403); without the CSRF token or from another origin nothing changes", async () => {
    const t = await owner();
    const m = await t.signedIn("member@example.com");
    await m.page("/console/settings");
    expect(
      (await m.post("/console/settings/alert-url", { alert_url: "https://93.184.215.14/m" })).status,
    ).toBe(403);
    expect(
      (
        await t.b.post(
          "/console/settings/alert-url",
          { alert_url: "https://93.184.215.14/a" },
          { csrf: "forged" },
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await t.b.post(
          "/console/settings/alert-url",
          { alert_url: "https://93.184.215.14/b" },
          { origin: "https://evil.example" },
        )
      ).status,
    ).toBe(403);
    expect(
      (await t.browser().post("/console/settings/alert-url", { alert_url: "https://93.184.215.14/c" }))
        .status,
    ).toBe(303);
    expect(await t.url()).toBeNull();
    // A member sees the URL but no form.
    await t.ctx.alerts.setUrl(t.account.id, "https://93.184.215.14/seen");
    const page = await m.page("/console/settings");
    expect(page.text).toContain("https://93.184.215.14/seen");
    expect(page.text).not.toContain('action="/console/settings/alert-url"');
  });

  test("another account's settings are untouched", async () => {
    const t = await owner();
    const other = (await t.ctx.accounts.createAccount("other", "USD")).account.id;
    await t.ctx.accounts.setAlertThreshold(other, 7_000_000n);
    await t.b.post("/console/settings/alert-url", { alert_url: "https://93.184.215.14/mine" });
    await t.b.post("/console/settings/alert-threshold", { threshold: "3" });
    const o = (await t.ctx.accounts.getAccount(other))!;
    expect([o.alert_url, o.alert_threshold_micro]).toEqual([null, 7_000_000n]);
    expect((await t.ctx.accounts.getAccount(t.account.id))!.alert_threshold_micro).toBe(3_000_000n);
  });
});
