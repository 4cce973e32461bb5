// The studio as a playground (issue 34) in Chromium, through the page's own controls: the form and
// its result side by side at 1280 px (bounding boxes), a drop zone that previews the chosen file
// before it runs, a run followed to its result and `Edit and run again` bringing its inputs back,
// a chat with a system prompt and parameters; axe at 1280 and 390 px, no sideways scrolling at 390 px,
// no request leaving the origin (checkPage on every page visited).
import { expect, test } from "bun:test";
import type { Locator } from "playwright-core";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import {
  axeViolations,
  describeBrowser,
  formatAxe,
  type GuardedPage,
  inviteAndSignIn,
  openGuardedPage,
  overflowsHorizontally,
} from "../helpers/browser.ts";
import { apiAccount, browserSession, checkPage, credit } from "./browser-e2e.ts";

const PHONE = { width: 390, height: 844 };
/** Where to write screenshots of the pages visited (for review), when set. */
const SHOTS = process.env.CONSOLE_SHOTS_DIR;

/** The two boxes sit side by side: `left` ends before `right` starts, and they share some height. */
async function sideBySide(left: Locator, right: Locator): Promise<string> {
  // A run page swaps its <main> when the run ends (app.js); a box read during the swap is null.
  let [a, b] = [await left.boundingBox(), await right.boundingBox()];
  for (let i = 0; i < 20 && (!a || !b); i++) {
    await Bun.sleep(100);
    [a, b] = [await left.boundingBox(), await right.boundingBox()];
  }
  if (!a || !b) return `no box: left ${JSON.stringify(a)} right ${JSON.stringify(b)}`;
  const beside = a.x + a.width <= b.x + 1 && b.y < a.y + a.height && a.y < b.y + b.height;
  return beside ? "side by side" : `left ${JSON.stringify(a)} right ${JSON.stringify(b)}`;
}

/** Stacked: `second` starts below the end of `first`. */
async function stacked(first: Locator, second: Locator): Promise<boolean> {
  const a = (await first.boundingBox())!;
  const b = (await second.boundingBox())!;
  return b.y >= a.y + a.height - 1;
}

/**
 * Polls `probe` (run from the test, through the DevTools protocol) until it is true. The page's CSP
 * forbids eval, which a string passed to waitForFunction needs.
 */
async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/** Waits until the upload put its file id in the Image URL field. */
async function fileIdIn(g: GuardedPage): Promise<void> {
  const field = g.page.getByLabel("Image URL", { exact: true });
  await until("a file id in Image URL", async () => /^file_/.test(await field.inputValue()));
}

/** Each path at 390 px in a second page of the same session: axe clean, no sideways scrolling. */
async function checkPhone(g: GuardedPage, paths: string[]): Promise<void> {
  const browser = g.context.browser()!;
  const phone = await openGuardedPage(browser, g.origin, {
    viewport: PHONE,
    storageState: await g.context.storageState(),
  });
  try {
    for (const path of paths) {
      await phone.goto(path);
      const findings = await axeViolations(phone.page);
      expect(`${path} at 390 px: ${formatAxe(findings)}`).toBe(`${path} at 390 px: `);
      expect(`${path} at 390 px scrolls sideways: ${await overflowsHorizontally(phone.page)}`).toBe(
        `${path} at 390 px scrolls sideways: false`,
      );
      phone.assertClean();
      if (SHOTS)
        await phone.page.screenshot({
          path: `${SHOTS}/playground-phone-${paths.indexOf(path)}.png`,
          fullPage: true,
        });
    }
    // Narrow: the result goes under the form, not beside it.
    await phone.goto(paths[0]!);
    expect(await stacked(phone.page.locator("#studio-form"), phone.page.locator("#studio-result"))).toBe(
      true,
    );
  } finally {
    await phone.close();
  }
}

describeBrowser("the studio as a playground", () => {
  const session = browserSession();
  let runPath = "";
  let key = "";

  test("form and result side by side; a dropped or chosen file is previewed; the run's result in place; Edit and run again brings the inputs back", async () => {
    const { server, g } = session;
    const person = await inviteAndSignIn(g, server);
    key = person.key!;
    const { account } = await apiAccount(server, key);
    await credit(server, account!.id, "1.00");
    await g.goto("/console/studio?model=sandbox/image");
    expect(await sideBySide(g.page.locator("#studio-form"), g.page.locator("#studio-result"))).toBe(
      "side by side",
    );
    // Labels from the schema: words, not input names; the help is the control's description.
    const prompt = g.page.getByLabel("Prompt", { exact: true });
    expect(await prompt.getAttribute("name")).toBe("prompt");
    expect(await g.page.getByLabel("num_images", { exact: true }).count()).toBe(0);
    const count = g.page.getByLabel("Num images", { exact: true });
    expect(await count.getAttribute("aria-describedby")).toBe("f-num_images-hint");
    expect(await g.page.locator("#f-num_images-hint").textContent()).toContain("1 to 4.");

    await prompt.fill("a lighthouse at dusk");
    await count.fill("2");
    await g.page.getByLabel("Seed", { exact: true }).fill("42");
    // Choose a file: its preview shows before anything runs, then its id lands in the URL field.
    await g.page.getByLabel("Upload a file for Image URL", { exact: true }).setInputFiles({
      name: "source.png",
      mimeType: "image/png",
      buffer: Buffer.from(encodePng(96, 64, 3)),
    });
    const preview = g.page.getByRole("img", { name: "Preview of source.png" });
    await preview.waitFor({ timeout: 15_000 });
    // The preview is the chosen file itself (a blob: URL, nothing requested), decoded: 96 px wide.
    await until("the preview decoded", async () => {
      const width = await preview.evaluate(
        (img) => (img as unknown as { naturalWidth: number }).naturalWidth,
      );
      return width === 96;
    });
    expect(await g.page.locator("#f-image_url-preview").textContent()).toContain("source.png");
    const url = g.page.getByLabel("Image URL", { exact: true });
    await fileIdIn(g);
    const fileId = await url.inputValue();
    await g.settle();
    await checkPage(g, "studio, a file chosen");

    await Promise.all([
      g.page.waitForURL(/\/console\/studio\/runs\/[0-9a-f-]{36}$/),
      g.page.getByRole("button", { name: "Run", exact: true }).click(),
    ]);
    runPath = new URL(g.page.url()).pathname;
    // The run's page: its input beside its progress, then the result in place.
    await g.page.locator(".run-input").waitFor();
    expect(await sideBySide(g.page.locator(".run-input"), g.page.locator("#studio-result"))).toBe(
      "side by side",
    );
    const again = g.page.getByRole("link", { name: "Edit and run again" });
    await again.waitFor({ timeout: 60_000 });
    expect(
      await g.page.locator("#studio-result [data-run-status] [data-status]").getAttribute("data-status"),
    ).toBe("COMPLETED");
    expect(await g.page.locator("#studio-result .outputs img").count()).toBe(2);
    expect(await g.page.locator("#code-curl").textContent()).toContain('"seed":42');
    await g.settle();
    await checkPage(g, "studio run, completed");
    if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/playground-run.png`, fullPage: true });

    await Promise.all([g.page.waitForURL(/\/console\/studio\?from=/), again.click()]);
    await g.settle();
    expect(await g.page.getByLabel("Prompt", { exact: true }).inputValue()).toBe("a lighthouse at dusk");
    expect(await g.page.getByLabel("Num images", { exact: true }).inputValue()).toBe("2");
    expect(await g.page.getByLabel("Seed", { exact: true }).inputValue()).toBe("42");
    expect(await g.page.getByLabel("Image URL", { exact: true }).inputValue()).toBe(fileId);
    expect(await g.page.locator("#studio-result .outputs img").count()).toBe(2);
    await checkPage(g, "studio, edit and run again");
    if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/playground-edit.png`, fullPage: true });
  }, 180_000);

  test("a file dropped on the drop zone is previewed and uploaded", async () => {
    const { g } = session;
    await g.goto("/console/studio?model=sandbox/upscale");
    const zone = g.page.locator("#f-image_url-file").locator("xpath=..");
    expect(await zone.getAttribute("data-drop-zone")).toBe("");
    expect(await zone.getByText("or drop a file here").isVisible()).toBe(true);
    // A DataTransfer holding a PNG, as a drag from the desktop carries it.
    const bytes = JSON.stringify(Array.from(encodePng(80, 40, 5)));
    const transfer = await g.page.evaluateHandle(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(${bytes})], "dropped.png", { type: "image/png" }));
      return dt;
    })()`);
    await zone.dispatchEvent("dragover", { dataTransfer: transfer });
    await zone.dispatchEvent("drop", { dataTransfer: transfer });
    await g.page.getByRole("img", { name: "Preview of dropped.png" }).waitFor({ timeout: 15_000 });
    await fileIdIn(g);
    await g.settle();
    await checkPage(g, "studio, a file dropped");
  }, 120_000);

  test("without JavaScript the plain file input still works: Run stores the chosen file and runs with its id", async () => {
    const { g } = session;
    const context = await g.context.browser()!.newContext({
      javaScriptEnabled: false,
      storageState: await g.context.storageState(),
    });
    const elsewhere: string[] = [];
    context.on("request", (r) => {
      if (new URL(r.url()).origin !== g.origin) elsewhere.push(r.url());
    });
    try {
      const page = await context.newPage();
      await page.goto(`${g.origin}/console/studio?model=sandbox/upscale`);
      // No script: no drop hint, the plain file input.
      expect(await page.getByText("or drop a file here").isVisible()).toBe(false);
      await page.getByLabel("Upload a file for Image URL", { exact: true }).setInputFiles({
        name: "plain.png",
        mimeType: "image/png",
        buffer: Buffer.from(encodePng(64, 64, 4)),
      });
      await Promise.all([
        page.waitForURL(/\/console\/studio\/runs\/[0-9a-f-]{36}$/),
        page.getByRole("button", { name: "Run", exact: true }).click(),
      ]);
      const stored = page.locator(".run-input dd").filter({ hasText: /^file_/ });
      expect(await stored.count()).toBe(1);
      expect(elsewhere).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  test("chat: a system prompt and parameters go with the message; a refused one keeps what was typed", async () => {
    const { server, g } = session;
    await g.goto("/console/studio?model=sandbox/chat");
    expect(await sideBySide(g.page.locator("#studio-chat-form"), g.page.locator("#studio-result"))).toBe(
      "side by side",
    );
    await g.page.getByLabel("System prompt", { exact: true }).fill("Answer in one short line.");
    await g.page.getByLabel("Temperature", { exact: true }).fill("0.5");
    await g.page.getByLabel("Max tokens", { exact: true }).fill("5");
    await g.page.getByLabel("Message", { exact: true }).fill("Hello, playground");
    // The Estimate holds the 5 reply tokens asked for.
    await g.page
      .locator("#studio-estimate-box")
      .filter({ hasText: "up to 5 reply tokens" })
      .waitFor({ timeout: 15_000 });
    await g.page.getByRole("button", { name: "Send" }).click();
    const cost = g.page.locator("[data-chat-cost]").first();
    await cost.waitFor({ timeout: 30_000 });
    // The sandbox cuts its reply at max_tokens: 5 tokens of its sentence, not the whole of it.
    const reply = (await g.page.locator(".chat-assistant .chat-text").first().textContent()) ?? "";
    expect(reply.length).toBeGreaterThan(0);
    expect(reply).not.toContain("streams one token at a time");
    // The call the chat made: the system prompt first, then the message; max_tokens 5.
    const list = (await (await server.fetch("/v1/requests?limit=1", { key })).json()) as {
      data: { request_id: string }[];
    };
    const res = await server.fetch(`/v1/requests/${list.data[0]!.request_id}`, { key });
    const detail = (await res.json()) as {
      input: { messages: { role: string; content: string }[]; max_tokens: number };
    };
    expect(detail.input.messages).toEqual([
      { role: "system", content: "Answer in one short line." },
      { role: "user", content: "Hello, playground" },
    ]);
    expect(detail.input.max_tokens).toBe(5);
    await g.settle();
    await checkPage(g, "studio chat, a reply with a system prompt");
    if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/playground-chat.png`, fullPage: true });

    // Out of bounds: the API's message under the reply, and everything typed stays. The chat's own
    // 400 is the one error this page may log (Chromium logs every fetch answered with an error).
    const other = await openGuardedPage(g.context.browser()!, g.origin, {
      storageState: await g.context.storageState(),
      allowConsoleErrors: [/status of 400 .*\/console\/studio\/chat$/],
    });
    try {
      await other.goto("/console/studio?model=sandbox/chat");
      await other.page.getByLabel("System prompt", { exact: true }).fill("Answer in one short line.");
      await other.page.getByLabel("Temperature", { exact: true }).fill("3");
      await other.page.getByLabel("Message", { exact: true }).fill("Too hot");
      await other.page.getByRole("button", { name: "Send" }).click();
      await other.page
        .getByText("temperature must be a number from 0 to 2.")
        .first()
        .waitFor({ timeout: 15_000 });
      expect(await other.page.getByLabel("Message", { exact: true }).inputValue()).toBe("Too hot");
      expect(await other.page.getByLabel("System prompt", { exact: true }).inputValue()).toBe(
        "Answer in one short line.",
      );
      expect(await other.page.getByLabel("Temperature", { exact: true }).inputValue()).toBe("3");
      await other.settle();
      other.assertClean();
    } finally {
      await other.close();
    }
  }, 120_000);

  test("axe at 1280 and 390 px, nothing scrolls sideways at 390 px", async () => {
    const { g } = session;
    for (const path of [
      "/console/studio?model=sandbox/image",
      runPath,
      "/console/studio?model=sandbox/chat",
    ]) {
      await g.goto(path);
      await checkPage(g, `${path} at 1280 px`);
    }
    await checkPhone(g, [
      "/console/studio?model=sandbox/image",
      runPath,
      "/console/studio?model=sandbox/chat",
    ]);
  }, 120_000);
});
