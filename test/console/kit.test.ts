import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import {
  type ConsoleKit,
  consoleKit,
  field,
  redirect,
  requireAccount,
  requireOperator,
  requireOwner,
} from "../../src/console/kit.ts";
import { csrfField } from "../../src/console/layout.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { html } from "../../src/lib/html.ts";
import { requestArrived } from "../../src/lib/low-priority.ts";
import { Browser, consoleApp } from "./helpers.ts";

/** An area written the way docs/console.md and src/console/http.ts tell page modules to. */
function sampleArea(kit: ConsoleKit, changes: string[]) {
  return new Elysia()
    .get(
      "/console/sample",
      kit.page(async (c) => {
        const s = requireAccount(c.session);
        return await c.layout({
          title: "Sample",
          active: "keys",
          body: html`<h1>Sample</h1><p>${s.email}</p><form method="post" action="/console/sample">${csrfField(s)}<input name="name"><button>Go</button></form>`,
        });
      }),
    )
    .post(
      "/console/sample",
      kit.action((c) => {
        requireOwner(c.session);
        changes.push(field(c.form, "name"));
        return redirect("/console/sample");
      }),
    )
    .get(
      "/console/sample/admin",
      kit.page(async (c) => {
        requireOperator(c.session);
        return await c.layout({ title: "Ops", active: "admin", body: html`<h1>Ops</h1>` });
      }),
    )
    .get(
      "/console/sample/:id",
      kit.page((c) => {
        throw new DomainError("not_found", `No key ${c.params.id}.`);
      }),
    );
}

async function sampleApp() {
  const c = await consoleApp();
  const changes: string[] = [];
  const area = new Elysia().use(sampleArea(consoleKit(c.ctx), changes));
  const handle = (path: string, init: RequestInit = {}) =>
    area.handle(new Request(`http://localhost${path}`, { redirect: "manual", ...init }));
  return { ...c, changes, area: handle };
}

describe("the page-module pattern (kit)", () => {
  test("signed out: a page is a 303 to sign-in with next; an action changes nothing", async () => {
    const c = await sampleApp();
    const page = await c.area("/console/sample?tab=2");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/console/login?next=%2Fconsole%2Fsample%3Ftab%3D2");
    expect(page.headers.get("content-security-policy")).not.toBeNull();
    const post = await new Browser(c.area).post("/console/sample", { name: "x" });
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe("/console/login");
    expect(c.changes).toEqual([]);
  });

  test("an owner sees the page in the frame and posts with the CSRF token", async () => {
    const c = await sampleApp();
    await c.person("ann@example.com");
    const ann = await c.signedIn("ann@example.com");
    const b = new Browser(c.area);
    b.cookie = ann.cookie;
    const page = await b.page("/console/sample");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/console/keys" aria-current="page">Keys</a>');
    expect(page.text).toContain("<p>ann@example.com</p>");
    const res = await b.post("/console/sample", { name: "first" });
    expect(res.status).toBe(303);
    expect(c.changes).toEqual(["first"]);
  });

  test("a member gets 403 on an owner-only action; a non-operator 403 on operator pages; foreign ids 404", async () => {
    const c = await sampleApp();
    await c.person("mia@example.com", "member");
    const mia = await c.signedIn("mia@example.com");
    const b = new Browser(c.area);
    b.cookie = mia.cookie;
    await b.page("/console/sample");
    const res = await b.post("/console/sample", { name: "nope" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Only an owner of this account can do this.");
    expect(c.changes).toEqual([]);
    const ops = await b.get("/console/sample/admin");
    expect(ops.status).toBe(403);
    expect(ops.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const foreign = await b.get("/console/sample/key_someone_elses");
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).toContain("No key key_someone_elses.");
  });
});

describe("pages at a lower priority than the API (src/lib/low-priority.ts)", () => {
  test("a page's handler runs after the work a request that arrived meanwhile queued", async () => {
    const c = await consoleApp();
    const kit = consoleKit(c.ctx);
    const order: string[] = [];
    const area = new Elysia().get(
      "/console/slow",
      kit.publicPage(() => {
        order.push("page");
        return html`<p>ok</p>`;
      }),
    );
    const page = area.handle(new Request("http://localhost/console/slow"));
    // An API request arrives in the next turn and queues its group commit's flush for the turn
    // after (a submit does both). Without the kit's turns the whole page ran before either.
    setImmediate(() => {
      requestArrived();
      order.push("api");
      setImmediate(() => order.push("flush"));
    });
    expect((await page).status).toBe(200);
    expect(order).toEqual(["api", "flush", "page"]);
  });
});
