import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DOWNLOAD_CAP } from "../../src/files/output-download.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { json, makeTestApp } from "../helpers/context.ts";
import { completedJobWithOutput } from "../helpers/outputs.ts";

/** A completed job with one 1000-byte output, made through the real JobStore. */
async function withOutput() {
  const t = await makeTestApp();
  const bytes = new Uint8Array(1000).map((_, i) => i % 251);
  const { id, link } = await completedJobWithOutput(t, bytes);
  return { t, id, bytes, link };
}

describe("output downloads", () => {
  test("a signed link needs no key; headers are complete", async () => {
    const { t, link, bytes } = await withOutput();
    const res = await t.request(link(), { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("content-length")).toBe("1000");
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{64}"$/);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });

  test("the owning key works without a signature; another account's key is 404; no key is 401", async () => {
    const { t, id } = await withOutput();
    expect((await t.request(`/v1/requests/${id}/output/0`)).status).toBe(200);
    const other = await t.ctx.accounts.createAccount("other", "USD");
    expect((await t.request(`/v1/requests/${id}/output/0`, { key: other.key })).status).toBe(404);
    expect((await t.request(`/v1/requests/${id}/output/0`, { key: null })).status).toBe(401);
  });

  test.each([
    ["bytes=0-", 206, "bytes 0-999/1000", 1000],
    ["bytes=0-99", 206, "bytes 0-99/1000", 100],
    ["bytes=-100", 206, "bytes 900-999/1000", 100],
    ["bytes=900-5000", 206, "bytes 900-999/1000", 100],
    ["bytes=-5000", 206, "bytes 0-999/1000", 1000],
    ["bytes=1000-", 416, "bytes */1000", 0],
    ["bytes=50-10", 416, "bytes */1000", 0],
    ["bytes=abc", 416, "bytes */1000", 0],
  ])("Range %s -> %i", async (range, status, contentRange, length) => {
    const { t, link, bytes } = await withOutput();
    const res = await t.request(link(), { key: null, headers: { range } });
    expect(res.status).toBe(status);
    expect(res.headers.get("content-range")).toBe(contentRange);
    if (status === 206) {
      const body = new Uint8Array(await res.arrayBuffer());
      expect(body.length).toBe(length);
      const start = Number(contentRange.split(" ")[1]!.split("-")[0]);
      expect(body).toEqual(bytes.subarray(start, start + length));
    } else {
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("range_not_satisfiable");
    }
  });

  test("an expired link is 410; an edited index, id or expiry is 403", async () => {
    const { t, link, id } = await withOutput();
    expect((await t.request(link(Math.floor(Date.now() / 1000) - 5), { key: null })).status).toBe(410);
    const good = link();
    expect((await t.request(good.replace("/output/0", "/output/1"), { key: null })).status).toBe(403);
    const otherId = `${id.slice(0, -1)}${id.endsWith("0") ? "1" : "0"}`;
    expect((await t.request(good.replace(id, otherId), { key: null })).status).toBe(403);
    expect(
      (
        await t.request(
          good.replace(/exp=(\d+)/, (_m, e) => `exp=${Number(e) + 1}`),
          { key: null },
        )
      ).status,
    ).toBe(403);
    expect((await t.request(`${good.split("&sig=")[0]}&sig=AAAA`, { key: null })).status).toBe(403);
    // Further ahead than 24 h is refused even when signed.
    expect((await t.request(link(Math.floor(Date.now() / 1000) + 3 * 86400), { key: null })).status).toBe(
      403,
    );
  });

  test("after a secret rotation, links signed with the previous secret stay valid", async () => {
    const { t, link } = await withOutput();
    const old = link();
    t.ctx.signer.setSecrets(["a-brand-new-secret-a-brand-new-secret", "test-secret-test-secret-test-secret"]);
    expect((await t.request(old, { key: null })).status).toBe(200);
    expect((await t.request(link(), { key: null })).status).toBe(200);
    t.ctx.signer.setSecrets(["a-brand-new-secret-a-brand-new-secret"]);
    expect((await t.request(old, { key: null })).status).toBe(403);
  });

  test("bad indexes are clear 4xx", async () => {
    const { t, id } = await withOutput();
    expect((await t.request(`/v1/requests/${id}/output/-1`)).status).toBe(400);
    expect((await t.request(`/v1/requests/${id}/output/abc`)).status).toBe(400);
    expect((await t.request(`/v1/requests/${id}/output/7`)).status).toBe(404);
    expect((await t.request("/v1/requests/not-a-uuid/output/0")).status).toBe(400);
  });

  test(`the cap: exactly ${DOWNLOAD_CAP} full downloads under parallel load; ranges still served`, async () => {
    const { t, link } = await withOutput();
    const url = link();
    const results = await Promise.all(
      Array.from({ length: DOWNLOAD_CAP + 25 }, () => t.request(url, { key: null })),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(DOWNLOAD_CAP);
    const capped = results.filter((r) => r.status === 429);
    expect(capped.length).toBe(25);
    expect(((await capped[0]!.json()) as { error: { code: string } }).error.code).toBe("download_cap");
    expect((await t.request(url, { key: null, headers: { range: "bytes=0-9" } })).status).toBe(206);
    // A range covering the whole file counts as a full download.
    expect((await t.request(url, { key: null, headers: { range: "bytes=0-" } })).status).toBe(429);
  });

  test("retention: expired outputs and uploads are swept with their bytes", async () => {
    const { t, id } = await withOutput();
    const path = join(t.ctx.files.root, "outputs", id, "0");
    expect(existsSync(path)).toBe(true);
    expect(await t.ctx.files.sweep(Date.now() + 2 * 3600_000)).toEqual({ files: 0, outputs: 1 });
    expect(existsSync(path)).toBe(false);
    expect((await t.request(`/v1/requests/${id}/output/0`)).status).toBe(404);
  });
});

describe("file references in model inputs", () => {
  async function upload(
    t: Awaited<ReturnType<typeof makeTestApp>>,
    bytes: Uint8Array,
    type = "image/png",
    key?: string,
  ) {
    const res = await t.request("/v1/files", {
      method: "POST",
      body: bytes,
      headers: { "content-type": type },
      ...(key ? { key } : {}),
    });
    return json<{ file_id: string; width?: number; height?: number }>(res);
  }

  test("a file id in a URL field resolves; the upscale is priced on the image's measured size", async () => {
    const t = await makeTestApp();
    await t.ctx.ledger.topUp(t.account.id, 1_000_000n, null);
    const f = await upload(t, encodePng(100, 50, 1));
    expect([f.width, f.height]).toEqual([100, 50]);
    const res = await t.request("/v1/queue/sandbox/upscale", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ image_url: f.file_id, scale: 2, width: 64, height: 64 }),
    });
    expect(res.status).toBe(202);
    // ceil(2000 micro/MP x (200 x 100) px / 1e6) = 40 from the measured 100x50, not the declared 64x64 (33).
    expect((await json<{ quoted_usd_micro: string }>(res)).quoted_usd_micro).toBe("40");
  });

  test.each([
    ["unknown", "file_AAAAAAAAAAAAAAAAAAAAAAAA"],
    ["malformed", "file_../../etc/passwd"],
  ])("%s file ids are 400 unknown_file naming the field", async (_l, id) => {
    const t = await makeTestApp();
    await t.ctx.ledger.topUp(t.account.id, 1_000_000n, null);
    const res = await t.request("/v1/queue/sandbox/video", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "x", image_url: id }),
    });
    expect(res.status).toBe(400);
    const e = (await json<{ error: { code: string; param: string } }>(res)).error;
    expect(e.code).toBe("unknown_file");
    expect(e.param).toBe("input.image_url");
    expect((await t.ctx.accounts.getAccount(t.account.id))!.held_micro).toBe(0n);
  });

  test("deleted and foreign files are unknown_file", async () => {
    const t = await makeTestApp();
    await t.ctx.ledger.topUp(t.account.id, 1_000_000n, null);
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const foreign = await upload(t, encodePng(8, 8, 1), "image/png", other.key);
    const mine = await upload(t, encodePng(8, 8, 2));
    expect((await t.request(`/v1/files/${mine.file_id}`, { method: "DELETE" })).status).toBe(200);
    for (const id of [foreign.file_id, mine.file_id]) {
      const res = await t.request("/v1/queue/sandbox/video", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "x", image_url: id }),
      });
      expect((await json<{ error: { code: string } }>(res)).error.code).toBe("unknown_file");
    }
    expect((await t.request(`/v1/files/${foreign.file_id}`)).status).toBe(404);
  });
});
