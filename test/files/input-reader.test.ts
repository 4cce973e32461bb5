import { describe, expect, test } from "bun:test";
import { fileContentUrl } from "../../src/files/references.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { ProviderError } from "../../src/providers/types.ts";
import { json, makeTestApp } from "../helpers/context.ts";
import { startS3 } from "../helpers/s3.ts";

/**
 * The input reader (src/files/input-reader.ts) on its happy and error paths; its security cases are
 * in test/providers/comfyui/input-security.test.ts. Our own uploads come from the blob store.
 */
type App = Awaited<ReturnType<typeof makeTestApp>>;

async function uploaded(t: App, bytes: Uint8Array): Promise<string> {
  const res = await t.request("/v1/files", {
    method: "POST",
    body: bytes,
    headers: { "content-type": "image/png" },
  });
  return (await json<{ file_id: string }>(res)).file_id;
}
const read = (t: App, value: string, maxBytes = 1 << 20) =>
  t.ctx.readInput(value, t.account.id, {
    what: "image_url",
    maxBytes,
    timeoutMs: 2000,
    signal: new AbortController().signal,
  });

describe("input reader: our own uploads", () => {
  test("a file id and an unsigned link to it (as at submit) give the stored bytes and type", async () => {
    const t = await makeTestApp();
    const png = encodePng(6, 5, 3);
    const id = await uploaded(t, png);
    for (const value of [id, fileContentUrl(t.ctx.publicUrl, id)]) {
      expect(await read(t, value)).toEqual({ bytes: new Uint8Array(png), contentType: "image/png" });
    }
  });

  test("a file over the provider's cap is an input error naming the field", async () => {
    const t = await makeTestApp();
    const id = await uploaded(t, encodePng(6, 5, 3));
    const err = (await read(t, id, 10).catch((e: unknown) => e)) as ProviderError;
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.kind).toBe("input");
    expect(err.message).toContain("image_url is larger than");
  });

  test("the S3 store down: a capacity error (the job backs off and retries), not a failure", async () => {
    const s3 = await startS3();
    const t = await makeTestApp({ blobs: s3.store() });
    const id = await uploaded(t, encodePng(4, 4, 1));
    await s3.stop();
    const err = (await read(t, id).catch((e: unknown) => e)) as ProviderError;
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.kind).toBe("capacity");
  });
});
