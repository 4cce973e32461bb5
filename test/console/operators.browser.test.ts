// The operator pages of issue 34 in Chromium (docs/console.md "Operator pages"): `Create account`
// with an owner to invite -> redirected to the account, its `New key` and invite link shown once, a
// reload shows neither -> the account's keys, `Revoke` one (dialog, `Revoke key`: the API refuses it)
// -> `Requests` across accounts with the account column and a filter -> `Disable account` (its key is
// 401) and `Enable account`. Every page at 1280 and 390 px: no request to another origin, no console
// error, no serious or critical axe violation, no sideways scrolling at 390 px.
import { expect, test } from "bun:test";
import { describeBrowser, inviteAndSignIn, overflowsHorizontally } from "../helpers/browser.ts";
import { apiAccount, browserSession, checkPage, credit, keyRow, runImage, visit } from "./browser-e2e.ts";

describeBrowser("the operator pages", () => {
  const session = browserSession();
  const state = { accountId: "", key: "", requestId: "" };

  test("create an account, see and revoke its keys, requests across accounts, disable and enable it", async () => {
    const { server, g } = session;
    await inviteAndSignIn(g, server, { operator: true });
    const page = g.page;

    // Create account (post/redirect/get): the Default key and the owner's invite link shown once.
    await visit(g, "/console/admin");
    await page.getByText("Create account", { exact: true }).first().click();
    const form = page.getByRole("form", { name: "Create account" });
    await form.getByLabel("Name", { exact: true }).fill("Browser Co");
    await form.getByLabel("Currency", { exact: true }).selectOption("USD");
    await form.getByLabel("Owner's email", { exact: true }).fill("boss@example.test");
    await Promise.all([
      page.waitForURL(/\/console\/admin\/accounts\/acct_\w+\?done=created$/),
      form.getByRole("button", { name: "Create account" }).click(),
    ]);
    await g.settle();
    await checkPage(g, "the new account");
    state.key = await page.getByLabel("New key", { exact: true }).inputValue();
    expect(state.key).toMatch(/^gk_/);
    expect(await page.getByLabel("Invite link for boss@example.test").inputValue()).toContain(
      "/console/invite/",
    );
    state.accountId = /accounts\/(acct_\w+)/.exec(page.url())![1]!;
    await page.reload();
    await g.settle();
    expect(await page.content()).not.toContain(state.key);
    expect((await apiAccount(server, state.key)).status).toBe(200);

    // Its keys: a second one made through the API, revoked on the page.
    const made = (await (
      await server.fetch("/v1/keys", {
        key: state.key,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "ci" }),
      })
    ).json()) as { key: string };
    await credit(server, state.accountId, "5");
    const run = await runImage(server, made.key);
    expect(run.status).toBe(200);
    state.requestId = run.requestId!;
    await visit(g, `/console/admin/accounts/${state.accountId}`);
    expect(await keyRow(page, "Default").count()).toBe(1);
    await keyRow(page, "ci").getByRole("button", { name: "Revoke ci" }).click();
    const confirm = page.getByRole("button", { name: "Revoke key", exact: true });
    await confirm.waitFor();
    await checkPage(g, "revoke confirmation");
    await Promise.all([page.waitForURL(/done=revoked$/), confirm.click()]);
    await g.settle();
    await checkPage(g, "account after revoking");
    expect((await apiAccount(server, made.key)).status).toBe(401);
    expect(await keyRow(page, "ci").getByText("revoked").count()).toBe(1);

    // Requests across accounts: the new account's request, with its account, and filtered by it.
    await visit(g, "/console/admin/requests");
    expect(await page.getByRole("link", { name: "Browser Co" }).count()).toBeGreaterThan(0);
    await page.getByLabel("Account", { exact: true }).fill(state.accountId);
    await Promise.all([
      page.waitForURL(/account=acct_/),
      page.getByRole("button", { name: "Filter", exact: true }).click(),
    ]);
    await g.settle();
    await checkPage(g, "requests filtered by account");
    await page.locator(`a[href="/console/admin/requests/${state.requestId}"]`).click();
    await g.settle();
    await checkPage(g, "a request of another account");
    expect(await page.getByRole("heading", { name: /Request/ }).count()).toBeGreaterThan(0);

    // Disable account (a reason), then Enable account.
    await visit(g, `/console/admin/accounts/${state.accountId}`);
    const disable = page.locator(`form[action$="/disable"]`);
    await disable.getByLabel("Reason", { exact: true }).fill("browser test");
    await Promise.all([
      page.waitForURL(/done=disabled$/),
      disable.getByRole("button", { name: "Disable account" }).click(),
    ]);
    await g.settle();
    await checkPage(g, "disabled account");
    expect((await apiAccount(server, state.key)).status).toBe(401);
    await Promise.all([
      page.waitForURL(/done=enabled$/),
      page.getByRole("button", { name: "Enable account" }).click(),
    ]);
    await g.settle();
    expect((await apiAccount(server, state.key)).status).toBe(200);
  }, 180_000);

  test("at 390 px every operator page fits without sideways scrolling and passes axe", async () => {
    const { g } = session;
    await g.page.setViewportSize({ width: 390, height: 844 });
    for (const path of [
      "/console/admin",
      `/console/admin/accounts/${state.accountId}`,
      "/console/admin/requests",
      `/console/admin/requests/${state.requestId}`,
      "/console/admin/people",
    ]) {
      await visit(g, path);
      expect(`${path}: ${await overflowsHorizontally(g.page)}`).toBe(`${path}: false`);
    }
  }, 120_000);
});
