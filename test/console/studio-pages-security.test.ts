import { describe, expect, test } from "bun:test";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { countRows } from "../helpers/backend.ts";
import { type Browser, consoleApp, ORIGIN, PASSWORD } from "./helpers.ts";

async function setup() {
  const c = await consoleApp();
  await c.ctx.ledger.topUp(c.account.id, 5_000_000n, "studio tests");
  await c.person("owner@example.com", "owner");
  const owner = await c.signedIn("owner@example.com");
  await owner.page("/console/studio");
  // A second account with its own person.
  const other = await c.ctx.accounts.createAccount("Other team", "USD");
  const { url } = await c.people.invites.createInvite({
    email: "eve@example.com",
    accountId: other.account.id,
    role: "owner",
  });
  await c.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
  const eve = await c.signedIn("eve@example.com");
  await eve.page("/console/studio");
  return { ...c, owner, eve, other };
}

type App = Awaited<ReturnType<typeof setup>>;

/** The page's upload: raw bytes with their type, the session cookie, Origin and the CSRF header. */
function upload(
  c: App,
  b: Browser,
  bytes: Uint8Array,
  type: string,
  opts: { csrf?: string | null; origin?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": type,
    origin: opts.origin ?? ORIGIN,
    cookie: `gengate_session=${b.cookie}`,
  };
  const csrf = opts.csrf === undefined ? b.csrf : opts.csrf;
  if (csrf) headers["x-csrf-token"] = csrf;
  return c.handle("/console/studio/upload", { method: "POST", body: bytes, headers });
}

const fileCount = (c: App) => countRows(c.ctx.sql, "files");

describe("studio upload into a URL field", () => {
  test("stores a file of the session's account through the files store (key null), measured", async () => {
    const c = await setup();
    const res = await upload(c, c.owner, encodePng(320, 200, 1), "image/png");
    expect(res.status).toBe(201);
    const body = (await res.json()) as {
      file_id: string;
      width: number;
      height: number;
      content_type: string;
    };
    expect(body.file_id).toMatch(/^file_[0-9A-Za-z]{24}$/);
    expect([body.width, body.height, body.content_type]).toEqual([320, 200, "image/png"]);
    const row = (await c.ctx.files.getLive(body.file_id, c.account.id))!;
    expect(row.key_id).toBeNull();
    // The upscale estimate prices the file's measured size, exactly as /v1/estimate does.
    const hx = { headers: { "hx-request": "true" } };
    const partial = await (
      await c.owner.post(
        "/console/studio/estimate",
        { model_id: "sandbox/upscale", image_url: body.file_id, scale: "2" },
        hx,
      )
    ).text();
    const api = await c.request("/v1/estimate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model_id: "sandbox/upscale", input: { image_url: body.file_id, scale: 2 } }),
    });
    const price = ((await api.json()) as { price_usd_micro: string }).price_usd_micro;
    expect(partial).toMatch(new RegExp(`<output id="studio-estimate"[^>]*>\\s*<data value="${price}">`));
  });

  test("without the CSRF token, with a wrong token or from another origin: 403, nothing stored", async () => {
    const c = await setup();
    const png = encodePng(64, 64, 1);
    for (const res of [
      await upload(c, c.owner, png, "image/png", { csrf: null }),
      await upload(c, c.owner, png, "image/png", { csrf: "x".repeat(43) }),
      await upload(c, c.owner, png, "image/png", { csrf: c.eve.csrf }),
      await upload(c, c.owner, png, "image/png", { origin: "https://evil.example" }),
    ]) {
      expect(res.status).toBe(403);
    }
    expect(await fileCount(c)).toBe(0);
  });

  test("signed out: no upload (303 to sign-in), nothing stored", async () => {
    const c = await setup();
    const res = await c.handle("/console/studio/upload", {
      method: "POST",
      body: encodePng(64, 64, 1),
      headers: { "content-type": "image/png", origin: ORIGIN },
    });
    expect(res.status).toBe(303);
    expect(await fileCount(c)).toBe(0);
  });

  test("the files store's checks apply: type not allowed, bytes not matching the type, empty", async () => {
    const c = await setup();
    const text = await upload(c, c.owner, new TextEncoder().encode("hello"), "text/plain");
    expect(text.status).toBe(415);
    expect(((await text.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
    const liar = await upload(c, c.owner, new TextEncoder().encode("not a png at all, really"), "image/png");
    expect(liar.status).toBe(415);
    const empty = await upload(c, c.owner, new Uint8Array(), "image/png");
    expect(empty.status).toBe(400);
    expect(await fileCount(c)).toBe(0);
  });

  test("another account's file id is refused: no estimate, the field named", async () => {
    const c = await setup();
    const res = await upload(c, c.eve, encodePng(64, 64, 2), "image/png");
    const { file_id } = (await res.json()) as { file_id: string };
    expect(await c.ctx.files.getLive(file_id, c.other.account.id)).not.toBeNull();
    const hx = { headers: { "hx-request": "true" } };
    const partial = await (
      await c.owner.post("/console/studio/estimate", { model_id: "sandbox/upscale", image_url: file_id }, hx)
    ).text();
    expect(partial).not.toMatch(/<output id="studio-estimate"[^>]*>\s*<data/);
    expect(partial).toContain("which is not a live file of this account");
    // The whole page shows the same message next to image_url.
    const page = await (
      await c.owner.post("/console/studio/estimate", { model_id: "sandbox/upscale", image_url: file_id })
    ).text();
    expect(page).toContain('id="f-image_url-error">input.image_url refers to');
    // The owner of the file prices it.
    const own = await (
      await c.eve.post("/console/studio/estimate", { model_id: "sandbox/upscale", image_url: file_id }, hx)
    ).text();
    expect(own).toMatch(/<output id="studio-estimate"[^>]*>\s*<data value="\d+"/);
  });
});

describe("studio pages: sign-in and CSRF", () => {
  test("signed out: the page leads to sign-in; the estimate changes nothing", async () => {
    const c = await setup();
    const page = await c.handle("/console/studio");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/console/login?next=%2Fconsole%2Fstudio");
  });

  test("the estimate needs the session's CSRF token", async () => {
    const c = await setup();
    const res = await c.owner.post("/console/studio/estimate", { model_id: "sandbox/image" }, { csrf: null });
    expect(res.status).toBe(403);
  });

  test("the page carries no inline script or style and escapes the operator's description", async () => {
    const c = await consoleApp({
      models: [
        {
          id: "acme/img",
          kind: "image",
          price_usd_micro: 1000,
          max: 2,
          description: "<script>alert(1)</script>",
        },
      ],
    });
    await c.person("o@example.com", "owner");
    const b = await c.signedIn("o@example.com");
    const { text } = await b.page("/console/studio?model=acme/img");
    expect(text).not.toContain("<script>alert");
    expect(text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(text).not.toMatch(/\sstyle=|\son[a-z]+=/);
  });
});
