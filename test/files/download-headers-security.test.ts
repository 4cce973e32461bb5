import { describe, expect, test } from "bun:test";
import { uploadKey } from "../../src/files/blob-backend.ts";
import { DOWNLOAD_CSP } from "../../src/files/download-headers.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { json, makeTestApp } from "../helpers/context.ts";
import { completedJobWithOutput } from "../helpers/outputs.ts";

/**
 * Issue 31, item 5: every response that serves stored user bytes carries nosniff, a
 * Content-Disposition (inline only for image/audio/video other than SVG) and the sandbox CSP, at
 * every door: job outputs and uploads, by signed link and by the owning key, whole, ranged (206)
 * and HEAD. A stored HTML or SVG file is an attachment, never a page of this origin.
 */
type TestApp = Awaited<ReturnType<typeof makeTestApp>>;

function expectSafe(res: Response, disposition: "inline" | "attachment", filename: string) {
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("content-security-policy")).toBe(DOWNLOAD_CSP);
  expect(res.headers.get("content-disposition")).toBe(
    `${disposition}; filename="${filename}"; filename*=UTF-8''${filename}`,
  );
}

/** An uploaded file of the test app's account, through POST /v1/files. */
async function uploaded(t: TestApp, bytes: Uint8Array, type: string): Promise<string> {
  const res = await t.request("/v1/files", {
    method: "POST",
    body: bytes,
    headers: { "content-type": type },
  });
  expect(res.status).toBe(201);
  return (await json<{ file_id: string }>(res)).file_id;
}

/**
 * A stored file whose row says `type` although uploads accept only media (a row written by an
 * older version or restored from its backup): the download must be safe whatever the row says.
 */
async function storedAs(t: TestApp, bytes: Uint8Array, type: string): Promise<string> {
  const id = `file_${"h".repeat(24)}`;
  await t.ctx.blobs.put(uploadKey(id), bytes, type);
  const now = Date.now();
  await t.ctx.files.insert({
    id,
    account_id: t.account.id,
    key_id: t.keyId,
    content_type: type,
    size: BigInt(bytes.length),
    sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"),
    path: uploadKey(id),
    width: null,
    height: null,
    created_at: BigInt(now),
    expires_at: BigInt(now + 3_600_000),
  });
  return id;
}

function signedUploadLink(t: TestApp, fileId: string): string {
  const exp = Math.floor(Date.now() / 1000) + 600;
  return `/v1/files/${fileId}/content?exp=${exp}&sig=${t.ctx.signer.sign(fileId, 0, exp)}`;
}

const HTML = new TextEncoder().encode("<!doctype html><script>alert(document.cookie)</script>");

describe("job output downloads", () => {
  test("signed and keyed, whole, ranged and HEAD: nosniff, inline disposition, CSP", async () => {
    const t = await makeTestApp();
    const { id, link } = await completedJobWithOutput(t, encodePng(64, 48, 1));
    const name = `${id}-0.png`;
    const doors: [string, string, RequestInit & { key?: string | null }, number][] = [
      ["signed", link(), { key: null }, 200],
      ["keyed", `/v1/requests/${id}/output/0`, {}, 200],
      ["signed range", link(), { key: null, headers: { range: "bytes=0-9" } }, 206],
      ["keyed range", `/v1/requests/${id}/output/0`, { headers: { range: "bytes=-10" } }, 206],
      ["signed HEAD", link(), { key: null, method: "HEAD" }, 200],
      ["keyed HEAD", `/v1/requests/${id}/output/0`, { method: "HEAD" }, 200],
    ];
    for (const [door, path, init, status] of doors) {
      const res = await t.request(path, init);
      expect([door, res.status]).toEqual([door, status]);
      expect(res.headers.get("content-type")).toBe("image/png");
      expectSafe(res, "inline", name);
    }
  });

  test("an upstream's HTML or SVG output is an attachment with the CSP, never a page", async () => {
    for (const [type, ext] of [
      ["text/html; charset=utf-8", "html"],
      ["image/svg+xml", "svg"],
      ["application/octet-stream", "bin"],
    ] as const) {
      const t = await makeTestApp();
      const { id, link } = await completedJobWithOutput(t, HTML, type);
      for (const init of [{ key: null }, { key: null, headers: { range: "bytes=0-4" } }]) {
        const res = await t.request(link(), init);
        expect(res.status).toBeOneOf([200, 206]);
        expectSafe(res, "attachment", `${id}-0.${ext}`);
      }
    }
  });
});

describe("upload downloads", () => {
  test("signed and keyed, GET and HEAD: nosniff, inline disposition, CSP", async () => {
    const t = await makeTestApp();
    const fileId = await uploaded(t, encodePng(32, 32, 2), "image/png");
    for (const [door, path, init] of [
      ["signed", signedUploadLink(t, fileId), { key: null }],
      ["keyed", `/v1/files/${fileId}/content`, {}],
      ["signed HEAD", signedUploadLink(t, fileId), { key: null, method: "HEAD" }],
      ["keyed HEAD", `/v1/files/${fileId}/content`, { method: "HEAD" }],
    ] as const) {
      const res = await t.request(path, init);
      expect([door, res.status]).toEqual([door, 200]);
      expect(res.headers.get("content-type")).toBe("image/png");
      expectSafe(res, "inline", `${fileId}.png`);
    }
  });

  test("a stored HTML file is served as an attachment with the CSP, by either door", async () => {
    const t = await makeTestApp();
    const fileId = await storedAs(t, HTML, "text/html");
    for (const [path, init] of [
      [signedUploadLink(t, fileId), { key: null }],
      [`/v1/files/${fileId}/content`, {}],
    ] as const) {
      const res = await t.request(path, init);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html");
      expectSafe(res, "attachment", `${fileId}.html`);
      expect(await res.text()).toContain("<script>");
    }
  });

  test("a PNG with HTML after its signature stays an image/png (nosniff), with the CSP", async () => {
    const t = await makeTestApp();
    const polyglot = new Uint8Array([...encodePng(8, 8, 3), ...HTML]);
    const fileId = await uploaded(t, polyglot, "image/png");
    const res = await t.request(`/v1/files/${fileId}/content`);
    expect(res.headers.get("content-type")).toBe("image/png");
    expectSafe(res, "inline", `${fileId}.png`);
  });
});
