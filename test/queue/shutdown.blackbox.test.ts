import { afterAll, describe, expect, test } from "bun:test";
import { pollUntil, startFunded } from "../helpers/api.ts";
import { withServerSql } from "../helpers/server.ts";

let s: Awaited<ReturnType<typeof startFunded>> | undefined;
afterAll(() => s?.cleanup());

describe("graceful shutdown", () => {
  test("SIGTERM ends /run waits and status streams at once, lets running jobs finish, exits 0", async () => {
    s = await startFunded("[limits]\nrun_wait_seconds = 60\n");
    const running = (await (
      await s.post("/v1/queue/sandbox/image", { prompt: "x", sandbox: { delay_ms: 1500 } })
    ).json()) as { request_id: string };
    await pollUntil(
      async () =>
        ((await (await s!.get(`/v1/requests/${running.request_id}/status`)).json()) as { status: string })
          .status,
      (st) => st === "IN_PROGRESS",
    );
    const run = s.post("/v1/run/sandbox/image", { prompt: "y", sandbox: { delay_ms: 1500 } });
    const stream = s.get(`/v1/requests/${running.request_id}/status/stream`).then((r) => r.text());
    await Bun.sleep(200);
    const t0 = Date.now();
    s.proc.kill("SIGTERM");
    const runRes = await run;
    expect(runRes.status).toBe(202); // the wait ended with the queued request, not a dropped connection
    await stream; // closed by the server
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await s.proc.exited).toBe(0);
    const rows = await withServerSql(s.dataDir, (sql) =>
      sql.all<{ status: string }>("SELECT status FROM jobs"),
    );
    // Both jobs were running and got their grace period to complete.
    expect(rows.map((r) => r.status)).toEqual(["COMPLETED", "COMPLETED"]);
  });
});
