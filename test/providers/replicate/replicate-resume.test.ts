import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { replicateHarness } from "./helpers.ts";
import { type MockReplicate, startMockReplicate } from "./mock-replicate.ts";

/**
 * Replicate answers a prediction's whole log on every poll (one growing string): a job resumed after
 * a restart must not forward again the lines its earlier attempt forwarded.
 */
let mock: MockReplicate;
beforeAll(() => {
  mock = startMockReplicate();
});
afterAll(() => mock.stop());

const { model, makeJob, runOk } = replicateHarness(() => mock);

describe("a resumed prediction's logs", () => {
  test("lines logged before the restart are not forwarded again; the rest are, in order", async () => {
    const id = mock.seed({ prompt: "x" });
    const h = makeJob(model("acme/m"), { prompt: "x" }, id);
    h.job.priorLogs = async () => [`Replicate prediction ${id} created`, "step 1", "step 2"];
    await runOk(h);
    expect(h.logs).toEqual([`resuming Replicate prediction ${id}`, "loading done", "finished"]);
  });

  test("without earlier lines every line is forwarded", async () => {
    const id = mock.seed({ prompt: "x" });
    const h = makeJob(model("acme/m"), { prompt: "x" }, id);
    h.job.priorLogs = async () => [];
    await runOk(h);
    expect(h.logs.slice(1)).toEqual(["step 1", "step 2", "loading done", "finished"]);
  });
});
