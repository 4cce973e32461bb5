// The studio chat in Chromium (issue 17): on a text model's studio page, `Message` + `Send` posts the
// conversation with fetch (app.js data-chat, CSP: no inline script), the reply streams into its
// bubble, then its cost shows (the server's ledger figure, sent after the stream) and the
// conversation's running total; each equals the STUDIO request's charge that GET /v1/requests lists.
import { expect, test } from "bun:test";
import { formatMoney } from "../../src/console/format.ts";
import { describeBrowser, inviteAndSignIn } from "../helpers/browser.ts";
import { apiAccount, browserSession, checkPage, credit } from "./browser-e2e.ts";

interface Item {
  request_id: string;
  source: string;
  model_id: string;
  price: { charged_micro: string | null; reserved_micro: string | null; currency: string };
}

describeBrowser("studio chat in the browser", () => {
  const session = browserSession();

  test("Send streams the reply, then its cost and the running total, equal to the STUDIO charges", async () => {
    const { server, g } = session;
    const person = await inviteAndSignIn(g, server);
    const { account } = await apiAccount(server, person.key!);
    await credit(server, account!.id, "1.00");
    await g.goto("/console/studio?model=sandbox/chat");

    const studioCharges = async () => {
      const res = await server.fetch("/v1/requests?limit=10", { key: person.key! });
      const items = ((await res.json()) as { data: Item[] }).data.filter((i) => i.source === "STUDIO");
      return items.map((i) => BigInt(i.price.charged_micro ?? "0"));
    };
    const studioHolds = async () => {
      const res = await server.fetch("/v1/requests?limit=10", { key: person.key! });
      const items = ((await res.json()) as { data: Item[] }).data.filter((i) => i.source === "STUDIO");
      return items.map((i) => BigInt(i.price.reserved_micro ?? "0"));
    };

    const send = async (text: string, nth: number) => {
      // The Estimate (htmx) follows the typed message and the conversation so far: nothing typed yet
      // (after a reply, the refresh of the emptied box says so), then the amount of what is typed.
      const estimate = g.page.getByLabel("Estimate", { exact: true });
      await estimate.filter({ hasText: "type a message" }).waitFor({ timeout: 15_000 });
      await g.page.getByLabel("Message", { exact: true }).fill(text);
      await estimate.filter({ hasText: "USD" }).waitFor({ timeout: 15_000 });
      const shown = (await estimate.locator("data").getAttribute("value"))!;
      await g.page.getByRole("button", { name: "Send" }).click();
      const cost = g.page.locator("[data-chat-cost]").nth(nth);
      await cost.waitFor({ timeout: 30_000 });
      const reply = await g.page.locator(".chat-assistant .chat-text").nth(nth).textContent();
      return {
        reply: reply ?? "",
        cost: (await cost.getAttribute("data-chat-cost"))!,
        estimate: BigInt(shown),
        text: await cost.textContent(),
      };
    };

    const first = await send("Hello, studio chat", 0);
    expect(first.reply.length).toBeGreaterThan(0);
    const [c1] = await studioCharges();
    expect(c1).toBeGreaterThan(0n);
    expect(BigInt(first.cost)).toBe(c1!);
    expect(first.text).toContain(formatMoney(c1!, "USD"));
    // The reply held exactly the Estimate shown before Send, and was charged at most that.
    expect((await studioHolds())[0]).toBe(first.estimate);
    expect(c1!).toBeLessThanOrEqual(first.estimate);
    await expect(g.page.locator("[data-chat-total]").textContent()).resolves.toBe(formatMoney(c1!, "USD"));
    await checkPage(g, "studio chat, one reply");

    const second = await send("And a second question, please", 1);
    expect(second.reply.length).toBeGreaterThan(0);
    const charges = await studioCharges();
    expect(charges.length).toBe(2);
    expect(BigInt(second.cost)).toBe(charges[0]!);
    // The second Estimate counted the conversation so far (more prompt tokens than the first).
    expect((await studioHolds())[0]).toBe(second.estimate);
    expect(second.estimate).toBeGreaterThan(first.estimate);
    await expect(g.page.locator("[data-chat-total]").textContent()).resolves.toBe(
      formatMoney(charges[0]! + charges[1]!, "USD"),
    );
    await expect(g.page.locator(".chat-user").count()).resolves.toBe(2);
  }, 120_000);
});
