// The requests list's pieces on their own: durations as people read them, the error rate's rounding,
// and the table's options (an Account column for a list across accounts, no actions without a CSRF
// field), which the operators' list reuses.
import { describe, expect, test } from "bun:test";
import { durationText } from "../../src/console/format.ts";
import { errorRate, requestTable } from "../../src/console/requests-list-view.ts";
import { html } from "../../src/lib/html.ts";
import type { RequestSummary } from "../../src/queue/requests.ts";

describe("durationText", () => {
  test("ms, tenths of seconds under 10 s, then two units, cut toward zero", () => {
    const cases: [number, string][] = [
      [0, "0 ms"],
      [-5, "0 ms"],
      [999, "999 ms"],
      [1000, "1 s"],
      [1499, "1.4 s"],
      [9999, "9.9 s"],
      [10_000, "10 s"],
      [59_999, "59 s"],
      [60_000, "1 min"],
      [125_000, "2 min 5 s"],
      [3_600_000, "1 h"],
      [3_780_000, "1 h 3 min"],
      [86_400_000, "1 d"],
      [187_200_000, "2 d 4 h"],
    ];
    for (const [ms, text] of cases) expect(`${ms}: ${durationText(ms)}`).toBe(`${ms}: ${text}`);
  });
});

describe("errorRate", () => {
  test("one decimal, half up; nothing finished is null", () => {
    expect(errorRate(2, 7)).toBe("28.6 %");
    expect(errorRate(1, 8)).toBe("12.5 %");
    expect(errorRate(1, 3)).toBe("33.3 %");
    expect(errorRate(0, 5)).toBe("0.0 %");
    expect(errorRate(5, 5)).toBe("100.0 %");
    expect(errorRate(1, 2000)).toBe("0.1 %"); // 0.05 % rounds up
    expect(errorRate(0, 0)).toBeNull();
  });
});

describe("requestTable", () => {
  const row = (status: RequestSummary["status"], live: boolean): RequestSummary => ({
    id: "019b76da-a800-714a-8bb6-f164ad7f2bce",
    account_id: "acct_one",
    created_at: "2026-11-20T00:00:00.000Z",
    started_at: null,
    completed_at: null,
    timing: { total_ms: 1500, queued_ms: 1500, running_ms: null, live },
    status,
    model_id: "sandbox/image",
    kind: "image",
    source: "API",
    key_id: null,
    key_name: null,
    error_code: null,
    price: { currency: "USD", quoted_usd_micro: 10_000n, reserved_micro: 10_000n, charged_micro: null },
  });

  test("an Account column when asked, and no actions without a CSRF field", () => {
    const t = requestTable([row("IN_QUEUE", true)], {
      csrf: null,
      back: "/console/admin/requests",
      account: (r) => `Name of ${r.account_id} <b>`,
    }).value;
    expect(t).toContain('<th scope="col">Account</th>');
    expect(t).toContain('<td data-label="Account">Name of acct_one &lt;b&gt;</td>');
    expect(t).not.toContain("Actions");
    expect(t).not.toContain("Cancel request");
  });

  test("with a CSRF field, only queued rows get Cancel request", () => {
    const csrf = html`<input type="hidden" name="csrf" value="t">`;
    const queued = requestTable([row("IN_QUEUE", true)], { csrf, back: "/console/requests" }).value;
    expect(queued).toContain(">Cancel request</button>");
    expect(queued).not.toContain("Account");
    const running = requestTable([row("IN_PROGRESS", true)], { csrf, back: "/console/requests" }).value;
    expect(running).toContain('<th scope="col">Actions</th>');
    expect(running).not.toContain("Cancel request");
    expect(requestTable([], { csrf, back: "/console/requests" }).value).toBe("<p>No requests match.</p>");
  });
});
