import { afterEach, describe, expect, test } from "bun:test";
import { formatMoney } from "../../src/console/format.ts";
import { waitForFinal } from "../../src/queue/submit.ts";
import type { WorkerPool } from "../../src/queue/workers.ts";
import { studioRun } from "../../src/studio/service.ts";
import { studioSetup } from "../studio/helpers.ts";

let pool: WorkerPool | null = null;
afterEach(async () => {
  await pool?.stop(1000);
  pool = null;
});

const runIds = (text: string) => [...text.matchAll(/<li data-run="([0-9a-f-]{36})">/g)].map((m) => m[1]!);

describe("studio history", () => {
  test("the person's runs, newest first, with status, model, time, charge and a gallery opening each run", async () => {
    const s = await studioSetup();
    const a = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "first", num_images: 2 });
    const b = await studioRun(s.ctx, s.ann, "sandbox/speech", { text: "second" });
    pool = s.workers();
    await waitForFinal(s.ctx, a.id, 30_000);
    await waitForFinal(s.ctx, b.id, 30_000);
    const c = await studioRun(s.ctx, s.ann, "sandbox/image", {
      prompt: "third",
      sandbox: { delay_ms: 60_000 },
    });

    const br = await s.signedIn("ann@example.com");
    const page = await br.page("/console/studio");
    expect(page.status).toBe(200);
    expect(page.text).toContain("Your runs");
    expect(runIds(page.text)).toEqual([c.id, b.id, a.id]);
    for (const id of [a.id, b.id, c.id]) expect(page.text).toContain(`href="/console/studio/runs/${id}"`);
    expect(page.text).toContain("COMPLETED");
    expect(page.text).toContain("sandbox/speech");
    // The gallery: fresh signed links to the image outputs, as the run page makes them.
    const imgs = [...page.text.matchAll(/<img src="([^"]+)" alt="Output (\d) of sandbox\/image"/g)];
    expect(imgs.length).toBe(2);
    const file = await s.handle(
      new URL(imgs[0]![1]!.replaceAll("&amp;", "&")).pathname +
        new URL(imgs[0]![1]!.replaceAll("&amp;", "&")).search,
    );
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toStartWith("image/");
    // The charge: the ledger's for the completed runs, "held" for the open one.
    const hold = (await s.ctx.sql.get<{ charged_micro: bigint }>(
      "SELECT charged_micro FROM holds WHERE id = ?",
      [(await s.ctx.jobs.get(a.id))!.hold_id],
    ))!;
    const row = new RegExp(`<li data-run="${a.id}">[\\s\\S]*?</li>`).exec(page.text)![0];
    expect(row).toContain(`<span data-run-charge>${formatMoney(BigInt(hold.charged_micro), "USD")}</span>`);
    expect(page.text).toMatch(/held<\/span>/);
  });

  test("20 a page, with an Older link to the rest", async () => {
    const s = await studioSetup(100_000_000n);
    s.ctx.live = { ...s.ctx.live, studio: { inFlightPerPerson: 100 } };
    const ids: string[] = [];
    for (let i = 0; i < 23; i++)
      ids.push((await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: `n${i}` })).id);
    const br = await s.signedIn("ann@example.com");
    const first = await br.page("/console/studio");
    expect(runIds(first.text)).toEqual(ids.slice(3).reverse());
    const older =
      /href="(\/console\/studio\?model=sandbox%2Fimage&amp;runs_before=[0-9a-f-]{36})#studio-history">Older</.exec(
        first.text,
      );
    expect(older).not.toBeNull();
    const second = await br.page(older![1]!.replace("&amp;", "&"));
    expect(runIds(second.text)).toEqual(ids.slice(0, 3).reverse());
    expect(second.text).not.toContain(">Older<");
  });

  test("only this person's runs of this account: Bob (same account) and Eve (another account) see none of Ann's", async () => {
    const s = await studioSetup();
    const mine = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "ann's private cat" });
    await s.ctx.ledger.topUp(s.otherAccountId, 1_000_000n, null);
    const eveRun = await studioRun(s.ctx, s.eve, "sandbox/image", { prompt: "eve's" });
    const ann = await s.signedIn("ann@example.com");
    const annPage = await ann.page("/console/studio");
    expect(runIds(annPage.text)).toEqual([mine.id]);
    const bob = await s.signedIn("bob@example.com");
    const bobPage = await bob.page("/console/studio");
    expect(bobPage.status).toBe(200);
    expect(runIds(bobPage.text)).toEqual([]);
    expect(bobPage.text).not.toContain(mine.id);
    const eve = await s.signedIn("eve@example.com");
    const evePage = await eve.page("/console/studio");
    expect(evePage.status).toBe(200);
    expect(evePage.text).not.toContain(mine.id);
    expect(runIds(evePage.text)).toEqual([eveRun.id]);
    // A cursor from another account's run does not reveal anything either.
    const cursor = await eve.page(`/console/studio?runs_before=${mine.id}`);
    expect(cursor.text).not.toContain(`data-run="${mine.id}"`);
  });
});
