import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { startFunded } from "../helpers/api.ts";

/** The fal storage protocol's upload URL is a capability: only it, unaltered and in time, takes bytes. */
let s: Awaited<ReturnType<typeof startFunded>>;
beforeAll(async () => {
  s = await startFunded("[limits]\nupload_max_bytes = 4000\n");
});
afterAll(() => s.cleanup());

const png = encodePng(16, 16, 2);

async function initiate(key?: string | null) {
  const res = await s.post(
    "/v1/storage/upload/initiate?storage_type=fal-cdn-v3",
    { content_type: "image/png", file_name: "a.png" },
    key === undefined ? {} : { key },
  );
  return {
    res,
    body: (await res.json()) as { upload_url: string; file_url: string; error?: { code: string } },
  };
}

const put = (url: string, body: Uint8Array = png) =>
  fetch(url, { method: "PUT", body, headers: { "content-type": "image/png" } });

const code = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

describe("fal storage upload URLs", () => {
  test("initiate needs a key", async () => {
    const { res, body } = await initiate(null);
    expect(res.status).toBe(401);
    expect(body.error!.code).toBe("unauthorized");
  });

  test("every part of the upload URL is covered by its signature", async () => {
    const { body } = await initiate();
    const url = new URL(body.upload_url);
    const otherFile = `file_${"A".repeat(24)}`;
    const tampered = [
      (u: URL) => u.searchParams.set("sig", `${u.searchParams.get("sig")!.slice(0, -2)}AA`),
      (u: URL) => u.searchParams.set("exp", String(Number(u.searchParams.get("exp")) + 10)),
      (u: URL) => u.searchParams.set("account", "acct_000000000000000000000"),
      (u: URL) => u.searchParams.set("key", "key_000000000000000000000"),
      (u: URL) => {
        u.pathname = u.pathname.replace(/file_[0-9A-Za-z]{24}/, otherFile);
      },
      (u: URL) => u.searchParams.delete("sig"),
    ];
    for (const change of tampered) {
      const u = new URL(url);
      change(u);
      const res = await put(u.toString());
      expect([400, 403]).toContain(res.status);
    }
    // Nothing was stored under the announced id.
    const fileId = /file_[0-9A-Za-z]{24}/.exec(body.file_url)![0];
    expect((await s.get(`/v1/files/${fileId}`)).status).toBe(404);
    expect((await put(body.upload_url)).status).toBe(200);
    expect((await s.get(`/v1/files/${fileId}`)).status).toBe(200);
  });

  test("an upload URL takes bytes once", async () => {
    const { body } = await initiate();
    expect((await put(body.upload_url)).status).toBe(200);
    const again = await put(body.upload_url);
    expect(again.status).toBe(409);
    expect(await code(again)).toBe("conflict");
  });

  test("a revoked key's upload URLs stop working", async () => {
    const created = (await (await s.post("/v1/keys", { name: "short-lived" })).json()) as {
      id: string;
      key: string;
    };
    const { body } = await initiate(created.key);
    expect((await s.fetch(`/v1/keys/${created.id}`, { method: "DELETE" })).status).toBe(200);
    const res = await put(body.upload_url);
    expect(res.status).toBe(401);
    expect(await code(res)).toBe("unauthorized");
  });

  test("the file belongs to the key's account: another account cannot read or use it", async () => {
    const other = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "other", credit: "5" }),
    });
    const otherKey = ((await other.json()) as { key: string }).key;
    const { body } = await initiate();
    expect((await put(body.upload_url)).status).toBe(200);
    const fileId = /file_[0-9A-Za-z]{24}/.exec(body.file_url)![0];
    expect((await s.fetch(`/v1/files/${fileId}/content`, { key: otherKey })).status).toBe(404);
    expect((await fetch(body.file_url)).status).toBe(401);
    const submit = await s.post(
      "/v1/queue/sandbox/upscale",
      { image_url: body.file_url, scale: 2 },
      { key: otherKey },
    );
    expect(submit.status).toBe(400);
    expect(await code(submit)).toBe("unknown_file");
  });

  test("bytes that are not what the Content-Type says, or too many, are refused and not kept", async () => {
    const { body } = await initiate();
    const res = await put(body.upload_url, new TextEncoder().encode("<html><script>x</script></html>"));
    expect(res.status).toBe(415);
    const fileId = /file_[0-9A-Za-z]{24}/.exec(body.file_url)![0];
    expect((await s.get(`/v1/files/${fileId}`)).status).toBe(404);
    const big = encodePng(300, 300, 9);
    expect(big.byteLength).toBeGreaterThan(4000);
    const tooBig = await initiate();
    const r = await put(tooBig.body.upload_url, big);
    expect(r.status).toBe(413);
    expect((await s.get(`/v1/files/${/file_[0-9A-Za-z]{24}/.exec(tooBig.body.file_url)![0]}`)).status).toBe(
      404,
    );
    const bad = await s.post("/v1/storage/upload/initiate", { content_type: "text/html" });
    expect(bad.status).toBe(415);
    const multipart = await s.post("/v1/storage/upload/initiate-multipart", {
      content_type: "image/png",
      file_name: "big.png",
    });
    expect(multipart.status).toBe(413);
  });
});
