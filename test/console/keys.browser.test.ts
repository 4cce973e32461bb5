// The Keys page in Chromium (docs/console.md "Keys"): create a key with every field (`Name`,
// `Monthly limit`, `Expires`, `Allowed models`, `Allowed addresses`) -> redirected to the page that
// shows `New key` once -> reloading it creates no second key and shows the key no more -> the API
// holds the key to its lists -> `Edit` renames it and changes its limits -> `Disable` (the API
// refuses it) -> `Enable` (it works again). Every page is checked: no request to another origin, no
// console error or CSP violation, no serious or critical axe violation (checkPage).
import { expect, test } from "bun:test";
import { describeBrowser, inviteAndSignIn, overflowsHorizontally } from "../helpers/browser.ts";
import { apiAccount, browserSession, checkPage, keyRow, visit } from "./browser-e2e.ts";

describeBrowser("the Keys page", () => {
  const session = browserSession();

  test("create with every field, reload, edit, disable, enable", async () => {
    const { server, g } = session;
    const person = await inviteAndSignIn(g, server);
    const listKeys = async () =>
      (
        (await (await server.fetch("/v1/keys", { key: person.key! })).json()) as {
          data: Record<string, unknown>[];
        }
      ).data;

    await visit(g, "/console/keys");
    const page = g.page;
    await page.getByLabel("Name", { exact: true }).fill("limited");
    await page.getByLabel("Monthly limit", { exact: true }).fill("5");
    await page.getByLabel("Expires", { exact: true }).fill("2099-01-31");
    await page.getByLabel("Allowed models", { exact: true }).fill("sandbox/image\nsandbox/sp*");
    // The test server is reached from 127.0.0.1 (and ::1): inside these.
    await page.getByLabel("Allowed addresses", { exact: true }).fill("127.0.0.0/8\n::1");
    await Promise.all([
      page.waitForURL(/\/console\/keys\?done=created$/),
      page.getByRole("button", { name: "Create key" }).click(),
    ]);
    await g.settle();
    const field = page.getByLabel("New key", { exact: true });
    const key = await field.inputValue();
    expect(key).toMatch(/^gk_/);
    await checkPage(g, "keys page with the new key");

    // A reload of the page the redirect led to: no second key, the key no longer shown.
    await page.reload();
    await g.settle();
    await checkPage(g, "keys page reloaded");
    expect(await page.content()).not.toContain(key);
    expect(await page.getByText("It was shown once").count()).toBe(1);
    const made = (await listKeys()).filter((k) => k.name === "limited");
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      monthly_limit_micro: "5000000",
      expires_at: "2099-02-01T00:00:00Z",
      allowed_models: ["sandbox/image", "sandbox/sp*"],
      allowed_cidrs: ["127.0.0.0/8", "::1/128"],
    });
    const estimate = (model_id: string) =>
      server.fetch("/v1/estimate", {
        method: "POST",
        key,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model_id }),
      });
    expect((await estimate("sandbox/image")).status).toBe(200);
    expect((await estimate("sandbox/video")).status).toBe(403);

    // Edit: rename, limits, lists.
    await keyRow(page, "limited").getByRole("link", { name: "Edit limited" }).click();
    await g.settle();
    await checkPage(g, "edit key");
    expect(await page.getByLabel("Expires", { exact: true }).inputValue()).toBe("2099-01-31");
    await page.getByLabel("Name", { exact: true }).fill("renamed");
    await page.getByLabel("Monthly limit", { exact: true }).fill("7.25");
    await page.getByLabel("Writes per minute", { exact: true }).fill("30");
    await page.getByLabel("Requests in flight", { exact: true }).fill("2");
    await page.getByLabel("Allowed models", { exact: true }).fill("sandbox/*");
    await Promise.all([
      page.waitForURL(/done=saved$/),
      page.getByRole("button", { name: "Save key" }).click(),
    ]);
    await g.settle();
    await checkPage(g, "keys page after the edit");
    expect((await listKeys()).find((k) => k.name === "renamed")).toMatchObject({
      monthly_limit_micro: "7250000",
      writes_per_minute: 30,
      max_in_flight: 2,
      expires_at: "2099-02-01T00:00:00Z",
      allowed_models: ["sandbox/*"],
    });
    expect((await estimate("sandbox/video")).status).toBe(200);

    // Disable: the API refuses the key (401, saying so); Enable: it works again.
    await Promise.all([
      page.waitForURL(/done=disabled$/),
      keyRow(page, "renamed").getByRole("button", { name: "Disable", exact: true }).click(),
    ]);
    await g.settle();
    await checkPage(g, "keys page with a disabled key");
    const refused = await apiAccount(server, key);
    expect(refused.status).toBe(401);
    expect(await keyRow(page, "renamed").getByText("disabled").count()).toBe(1);
    await Promise.all([
      page.waitForURL(/done=enabled$/),
      keyRow(page, "renamed").getByRole("button", { name: "Enable", exact: true }).click(),
    ]);
    await g.settle();
    await checkPage(g, "keys page with the key enabled again");
    expect((await apiAccount(server, key)).status).toBe(200);
  }, 120_000);

  test("a narrow screen (390 px) keeps the form and the row's actions reachable without sideways scrolling", async () => {
    const { g } = session;
    await g.page.setViewportSize({ width: 390, height: 844 });
    await visit(g, "/console/keys");
    expect(await overflowsHorizontally(g.page)).toBe(false);
    // The first key's row actions are on the page at that width (the table scrolls in its own box).
    expect(await g.page.getByRole("button", { name: "Disable", exact: true }).first().isVisible()).toBe(true);
  }, 60_000);
});
