/**
 * The console's form cap in process (issue 31; the memory and disk figures are in
 * bodies-security.blackbox.test.ts): past FORM_BODY_MAX a form is the console's 413 page and
 * nothing is stored; under it, urlencoded and multipart forms are read as before.
 */
import { describe, expect, test } from "bun:test";
import { FORM_BODY_MAX } from "../../src/http/body-limit.ts";
import { consoleApp, ORIGIN, PASSWORD } from "./helpers.ts";

const failures = async (c: Awaited<ReturnType<typeof consoleApp>>) =>
  (await c.ctx.sql.all<{ subject: string }>("SELECT subject FROM signin_failures", [])).length;

describe("console form bodies", () => {
  test("a sign-in form over the cap is the 413 page, with nothing stored", async () => {
    const c = await consoleApp();
    const email = `${"a".repeat(FORM_BODY_MAX)}@example.com`;
    const res = await c.browser().post("/console/login", { email, password: "whatever123" });
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const text = await res.text();
    expect(text).toContain("Error 413");
    expect(text).toContain("This form is larger than the limit of 4 MiB, so nothing was changed.");
    expect(await failures(c)).toBe(0);
  });

  test("the same form streamed without a length is refused the same way", async () => {
    const c = await consoleApp();
    const chunk = new TextEncoder().encode("a".repeat(1024 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent > FORM_BODY_MAX) return ctl.close();
        ctl.enqueue(sent === 0 ? new TextEncoder().encode("email=") : chunk);
        sent += sent === 0 ? 6 : chunk.length;
      },
    });
    const res = await c.handle("/console/login", {
      method: "POST",
      body,
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toContain("Error 413");
    expect(await failures(c)).toBe(0);
  });

  test("a form just under the cap is read (a failed sign-in, not a 413)", async () => {
    const c = await consoleApp();
    const email = `${"a".repeat(FORM_BODY_MAX - 100)}@example.com`;
    const res = await c.browser().post("/console/login", { email, password: "whatever123" });
    expect(res.status).toBe(401);
    expect(await failures(c)).toBe(1);
  });

  test("a multipart form is read as before", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const form = new FormData();
    form.set("email", "ann@example.com");
    form.set("password", PASSWORD);
    const res = await c.handle("/console/login", { method: "POST", body: form, headers: { origin: ORIGIN } });
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toStartWith("gengate_session=");
  });
});
