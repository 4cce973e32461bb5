// The requests pages' security: another account's request is "not found" by id, by the live
// partials and by Cancel request (never its data, never cancelled); Cancel request needs the
// session's CSRF token and our Origin, a signed-in person and an account (owners and members both
// may cancel, as both may use the account's API).
import { describe, expect, test } from "bun:test";
import { seedJob } from "../queue/seed-jobs.ts";
import { consoleApp } from "./helpers.ts";

const c = await consoleApp();
const { ctx } = c;
await ctx.ledger.topUp(c.account.id, 100_000_000n, null);
const other = await ctx.accounts.createAccount("Other", "USD");
await ctx.ledger.topUp(other.account.id, 10_000_000n, null);
const mine = (j: Partial<Parameters<typeof seedJob>[2]> = {}) =>
  seedJob(ctx, c.account.id, { keyId: c.keyId, createdAt: Date.now(), status: "IN_QUEUE", ...j });
const theirs = (j: Partial<Parameters<typeof seedJob>[2]> = {}) =>
  seedJob(ctx, other.account.id, {
    keyId: other.keyId,
    createdAt: Date.now(),
    status: "IN_QUEUE",
    modelId: "sandbox/secret-of-other",
    ...j,
  });
await c.person("owner@example.com");
await c.person("member@example.com", "member");
await c.person("leaving@example.com", "member");
const owner = await c.signedIn("owner@example.com");
const member = await c.signedIn("member@example.com");
const statusOf = async (id: string) => (await ctx.jobs.get(id))!.status;

describe("another account's requests", () => {
  test("by Request id: 'not found', like an unknown id, and nothing of it on the page", async () => {
    const id = await theirs({ status: "COMPLETED", queuedMs: 1, runMs: 1 });
    for (const b of [owner, member]) {
      const p = await b.page(`/console/requests?id=${id}`);
      expect(p.status).toBe(404);
      expect(p.text).toContain(`No request ${id} in this account.`);
      expect(p.text).not.toContain("secret-of-other");
      expect(p.text).not.toContain(`/console/requests/${id}"`);
    }
  });

  test("the live partials leave it out (list) or answer 404 (detail)", async () => {
    const id = await theirs();
    const own = await mine();
    const p = await owner.page(`/console/requests/live?ids=${id},${own}`);
    expect(p.status).toBe(200);
    expect(p.text).toContain(`request-${own}`);
    expect(p.text).not.toContain(id);
    expect(p.text).not.toContain("secret-of-other");
    expect((await owner.page(`/console/requests/${id}/live`)).status).toBe(404);
  });

  test("Cancel request on it: 404, and it stays queued with its hold", async () => {
    const id = await theirs();
    await owner.page("/console/requests");
    const res = await owner.post(`/console/requests/${id}/cancel`, { back: "/console/requests" });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("secret-of-other");
    expect(await statusOf(id)).toBe("IN_QUEUE");
  });
});

describe("Cancel request: CSRF, Origin, session, role", () => {
  test("a missing or wrong token, or another origin: 403 and the job stays queued", async () => {
    const id = await mine();
    await owner.page("/console/requests");
    const wrong = `${owner.csrf!.slice(0, -1)}${owner.csrf!.endsWith("A") ? "B" : "A"}`;
    for (const csrf of [null, "", wrong]) {
      const res = await owner.post(`/console/requests/${id}/cancel`, {}, { csrf });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain("nothing was changed");
    }
    for (const origin of [null, "https://evil.example", "null", "http://gengate.test:8080"]) {
      expect((await owner.post(`/console/requests/${id}/cancel`, {}, { origin })).status).toBe(403);
    }
    // Another session's token does not do either.
    await member.page("/console/requests");
    expect((await owner.post(`/console/requests/${id}/cancel`, {}, { csrf: member.csrf })).status).toBe(403);
    expect(await statusOf(id)).toBe("IN_QUEUE");
    // The refusals were for those reasons: the same form with the right token works.
    expect((await owner.post(`/console/requests/${id}/cancel`, {})).status).toBe(303);
    expect(await statusOf(id)).toBe("CANCELLED");
  });

  test("signed out: to the sign-in page, nothing changed", async () => {
    const id = await mine();
    const res = await c.browser().post(`/console/requests/${id}/cancel`, {}, { csrf: "x" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith("/console/login");
    expect(await statusOf(id)).toBe("IN_QUEUE");
  });

  test("a member may cancel (they may use the account's API); a person no longer in the account may not", async () => {
    const byMember = await mine();
    await member.page("/console/requests");
    expect((await member.post(`/console/requests/${byMember}/cancel`, {})).status).toBe(303);
    expect(await statusOf(byMember)).toBe("CANCELLED");

    const id = await mine();
    const leaving = await c.signedIn("leaving@example.com");
    await leaving.page("/console/requests");
    const person = (await c.people.members.findPerson("leaving@example.com"))!;
    await owner.page("/console/settings");
    const removed = await owner.post(`/console/settings/members/${person.id}/remove`, { confirm: "yes" });
    expect(removed.status).toBe(303);
    const res = await leaving.post(`/console/requests/${id}/cancel`, {});
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("You are not a member of any account");
    expect(await statusOf(id)).toBe("IN_QUEUE");
    expect((await leaving.page("/console/requests")).status).toBe(403);
    expect((await leaving.page(`/console/requests/live?ids=${id}`)).status).toBe(403);
  });
});
