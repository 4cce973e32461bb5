/**
 * The route that ran a request and its upstream cost (issue 35) are facts of the operator's request
 * page only: the account's own request page, which its people read, never names an upstream.
 */
import { describe, expect, test } from "bun:test";
import { json } from "../helpers/context.ts";
import { consoleApp } from "./helpers.ts";

describe("a request's route on the console", () => {
  test("the operator's request page shows Route and Upstream cost; the account's own page shows neither", async () => {
    const c = await consoleApp();
    await c.ctx.ledger.topUp(c.account.id, 10_000_000n, null);
    await c.person("op@example.com", "owner", true);
    await c.person("member@example.com", "owner", false);
    const op = await c.signedIn("op@example.com");
    const member = await c.signedIn("member@example.com");
    const res = await c.request("/v1/queue/sandbox/image", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "p" }),
    });
    const id = (await json(res)).request_id as string;

    const mine = await member.page(`/console/requests/${id}`);
    expect(mine.status).toBe(200);
    expect(mine.text).not.toContain("<dt>Route</dt>");
    expect(mine.text).not.toContain("Upstream cost");

    const theirs = await op.page(`/console/admin/requests/${id}`);
    expect(theirs.status).toBe(200);
    expect(theirs.text).toContain("<dt>Route</dt>");
    expect(theirs.text).toContain('<span class="mono">sandbox</span> (route 1)');
    expect(theirs.text).toContain("<dt>Upstream cost</dt><dd>Unknown</dd>");

    // A member who is no operator cannot open the operator's page.
    expect((await member.page(`/console/admin/requests/${id}`)).status).toBe(403);
  });
});
