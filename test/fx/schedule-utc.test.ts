import { afterEach, expect, test } from "bun:test";
import { Cron } from "croner";
import { scheduleFxRefresh } from "../../src/fx/refresh.ts";
import { UTC_NO_OVERLAP } from "../../src/lib/cron.ts";

// Scheduled jobs run on UTC whatever the host's time zone (docs/configuration.md), through croner's
// utcOffset rather than its time-zone option (which loads Intl's data at start): src/lib/cron.ts.

const savedTz = process.env.TZ;
afterEach(() => {
  process.env.TZ = savedTz;
});

test("the fx refresh at 03:00 means 03:00 UTC on a host at UTC+5:30", () => {
  process.env.TZ = "Asia/Kolkata";
  expect(new Date(Date.UTC(2026, 0, 1, 0, 0)).getHours()).toBe(5); // the zone took effect
  const job = scheduleFxRefresh({ url: "http://127.0.0.1:9/", field: null, cron: "0 3 * * *" }, {} as never, {
    run: async () => false,
  });
  try {
    expect(job.nextRun()!.getUTCHours()).toBe(3);
    expect(job.nextRun()!.getUTCMinutes()).toBe(0);
  } finally {
    job.stop();
  }
});

test("the sweeps' options read a pattern as UTC, like croner's UTC time zone, on a host at UTC-3:30", () => {
  process.env.TZ = "America/St_Johns";
  for (const pattern of ["0 3 * * *", "17 * * * *", "*/5 * * * *", "30 * * * * *", "0 0 1 * *"]) {
    const ours = new Cron(pattern, { ...UTC_NO_OVERLAP, paused: true });
    const utc = new Cron(pattern, { paused: true, timezone: "Etc/UTC" });
    expect(ours.nextRun()?.getTime()).toBe(utc.nextRun()!.getTime());
    ours.stop();
    utc.stop();
  }
});
