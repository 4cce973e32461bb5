import { describe, expect, test } from "bun:test";
import { LOW_PRIORITY_MAX_TURNS, lowPriorityTurn, requestArrived } from "../../src/lib/low-priority.ts";

// Turns of the event loop are counted, never timed: each `setImmediate` callback below is one
// turn's check phase, in the order Bun runs them (queued during a check phase: the next turn).
const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("lowPriorityTurn", () => {
  test("with no request arriving it resumes after one turn, before work queued after it", async () => {
    const order: string[] = [];
    const page = lowPriorityTurn().then(() => order.push("page"));
    setImmediate(() => order.push("later"));
    await page;
    await immediate();
    expect(order).toEqual(["page", "later"]);
  });

  test("a request that arrives meanwhile runs the work it queued before the page's next step", async () => {
    const order: string[] = [];
    // A request arrives in the turn the page waits on and queues its group commit's flush for
    // the next turn's check phase, as a submit does.
    setImmediate(() => {
      requestArrived();
      order.push("submit");
      setImmediate(() => order.push("flush"));
    });
    await lowPriorityTurn();
    order.push("page");
    expect(order).toEqual(["submit", "flush", "page"]);
  });

  test("one arrival costs the page one more turn, no more, once nothing else arrives", async () => {
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(() => {
      requestArrived();
      tick();
    });
    await lowPriorityTurn();
    ticking = false;
    // The turn of the arrival, then one more (the page resumes after the ticker's second run).
    expect(turns).toBe(2);
  });

  test("never starves: a request arriving on every turn delays a step by at most the bound", async () => {
    let turns = 0;
    let arriving = true;
    const arrive = () => {
      turns++;
      requestArrived();
      if (arriving) setImmediate(arrive);
    };
    setImmediate(arrive);
    await lowPriorityTurn();
    arriving = false;
    // One arrival per turn for as long as the page waits: it resumes after the bound, not never.
    expect(turns).toBe(LOW_PRIORITY_MAX_TURNS);
    await immediate();
  });
});
