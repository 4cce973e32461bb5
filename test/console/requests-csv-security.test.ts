// /console/requests.csv's security (issue 36): another account's requests never appear, whatever
// the filters (its key, its model); signed out goes to sign-in; owners and members of the account
// get the file, a person of no account 403, like the other CSVs.
import { describe, expect, test } from "bun:test";
import { csvObjects } from "../helpers/csv.ts";
import { seedJob } from "../queue/seed-jobs.ts";
import { consoleApp } from "./helpers.ts";

const c = await consoleApp();
const { ctx } = c;
await ctx.ledger.topUp(c.account.id, 100_000_000n, null);
const other = await ctx.accounts.createAccount("Other", "USD");
await ctx.ledger.topUp(other.account.id, 10_000_000n, null);
const mine = await seedJob(ctx, c.account.id, { keyId: c.keyId, createdAt: Date.now(), status: "COMPLETED" });
const theirs = await seedJob(ctx, other.account.id, {
  keyId: other.keyId,
  createdAt: Date.now(),
  status: "COMPLETED",
  modelId: "sandbox/secret-of-other",
});
await c.person("owner@example.com");
await c.person("member@example.com", "member");
await c.person("leaving@example.com", "member");
const owner = await c.signedIn("owner@example.com");
const member = await c.signedIn("member@example.com");

describe("requests.csv security", () => {
  test("another account's requests never appear, also filtered by its key or its model", async () => {
    for (const q of ["", `?key=${other.keyId}`, "?model=sandbox/secret-of-other", "?status=COMPLETED"]) {
      const text = await (await owner.get(`/console/requests.csv${q}`)).text();
      expect(text, q).not.toContain(theirs);
      expect(text, q).not.toContain("secret-of-other");
      expect(text, q).not.toContain(other.keyId);
    }
    expect(csvObjects(await (await owner.get("/console/requests.csv")).text()).map((r) => r.id)).toEqual([
      mine,
    ]);
  });

  test("signed out: sign-in, no file", async () => {
    const res = await c.browser().get("/console/requests.csv");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith("/console/login");
    expect(res.headers.get("content-disposition")).toBeNull();
  });

  test("owners and members get the file; a person removed from the account gets 403", async () => {
    for (const b of [owner, member]) {
      const res = await b.get("/console/requests.csv");
      expect(res.status).toBe(200);
      expect(csvObjects(await res.text()).map((r) => r.id)).toEqual([mine]);
    }
    const leaving = await c.signedIn("leaving@example.com");
    await leaving.page("/console/requests");
    const person = (await c.people.members.findPerson("leaving@example.com"))!;
    await owner.page("/console/settings");
    const removed = await owner.post(`/console/settings/members/${person.id}/remove`, { confirm: "yes" });
    expect(removed.status).toBe(303);
    const res = await leaving.get("/console/requests.csv");
    expect(res.status).toBe(403);
    expect(res.headers.get("content-disposition")).toBeNull();
    expect(await res.text()).not.toContain(mine);
  });
});
