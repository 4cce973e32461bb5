import { describe, expect, test } from "bun:test";
import { consoleApp } from "./helpers.ts";

async function operator() {
  const c = await consoleApp();
  await c.person("op@example.com", "owner", true);
  return await c.signedIn("op@example.com");
}

describe("Margins page: errors", () => {
  test("a bad range is 400 on the page, with the message and the form as sent", async () => {
    const b = await operator();
    for (const [query, message] of [
      ["from=2026-11-02&to=2026-11-01&by=model", "to must be on or after from."],
      ["from=2025-01-01&to=2026-06-01&by=model", "A report spans at most 366 days."],
      ["from=2026-02-30&to=2026-03-01&by=model", "from must be a date, YYYY-MM-DD (UTC)."],
      ["from=2026-11-01&to=2026-11-30&by=key", "by must be model, provider, account."],
    ] as const) {
      const p = await b.page(`/console/admin/margins?${query}`);
      expect(p.status).toBe(400);
      expect(p.text).toContain(`<p class="notice error" role="alert">${message}</p>`);
      expect(p.text).not.toContain("Download CSV");
    }
  });

  test("the CSV of a bad range is the contract's 400, not a file", async () => {
    const b = await operator();
    const res = await b.get("/console/admin/margins.csv?from=2026-11-02&to=2026-11-01");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-disposition")).toBeNull();
  });
});
