import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { replaceFileRefs, signedFileUrl } from "../../../src/files/references.ts";
import { encodePng } from "../../../src/providers/sandbox/media/index.ts";
import { ProviderError } from "../../../src/providers/types.ts";
import { finalJob, json, submitQueued, testWorkerPool } from "../../helpers/context.ts";
import { comfyApp, internalService } from "./helpers.ts";
import { startMockComfy } from "./mock-comfy.ts";

/**
 * Image inputs of a ComfyUI job (issue 31, item 1). The gateway used to trust a URL that merely
 * looked like one of its signed file links (path `/v1/files/file_…/content`, `exp` and `sig` in the
 * query), whatever its host, and repeated the status the URL answered: a client could make it GET
 * any internal address and tell open ports from closed ones by the job's error. Now our own uploads
 * are read from the store (signature and owner checked) and every other URL goes through the
 * outbound policy of webhooks, with one fixed message for every failure.
 */
const mock = startMockComfy();
mock.slowMs = 0;
const t = await comfyApp(mock.url, "img2img");
// What the server's pool does (src/app/background.ts): file ids reach providers as signed links to
// the public URL, http://gengate.test here, a host that does not resolve: any HTTP fetch of one fails.
const pool = testWorkerPool(t.ctx, {
  prepareInput: (input) =>
    replaceFileRefs(input, (id) => signedFileUrl(t.ctx, id)) as Record<string, unknown>,
});

/** An internal service answering 404. */
const internal = internalService(() => new Response("internal admin", { status: 404 }));
const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
const closedPort = closed.port!;
closed.stop(true);

afterAll(async () => {
  await pool.stop(1000);
  internal.server.stop(true);
  mock.stop();
});
beforeEach(() => {
  mock.uploads.length = 0;
  mock.prompts.length = 0;
  internal.hits = 0;
});

async function upload(bytes: Uint8Array, key = t.key): Promise<string> {
  const res = await t.request("/v1/files", {
    method: "POST",
    body: bytes,
    headers: { "content-type": "image/png" },
    key,
  });
  return (await json<{ file_id: string }>(res)).file_id;
}

/** The reader the worker pool hands providers, for a job of `accountId`. */
const read = (value: string, accountId = t.account.id) =>
  t.ctx.readInput(value, accountId, {
    what: "image_url",
    maxBytes: 1 << 20,
    timeoutMs: 2000,
    signal: new AbortController().signal,
  });

/** The error a job ends with (it must fail). */
async function failure(input: Record<string, unknown>): Promise<string> {
  const id = await submitQueued(t, "c/img2img", input);
  const job = await finalJob(t.ctx, id);
  expect(job.status).toBe("FAILED");
  return job.error_message ?? "";
}

describe("comfyui image inputs: SSRF", () => {
  test("a file-link-shaped URL on an internal port fails closed; an open and a closed port answer the same", async () => {
    const attack = (port: number) => `http://127.0.0.1:${port}/v1/files/file_x/content?exp=1&sig=x`;
    const open = await failure({ prompt: "x", image_url: attack(internal.server.port!) });
    const shut = await failure({ prompt: "x", image_url: attack(closedPort) });
    expect(internal.hits).toBe(0);
    expect(open).toBe(shut);
    for (const leak of [String(internal.server.port), String(closedPort), "404", "refused", "127.0.0.1"]) {
      expect(open).not.toContain(leak);
    }
    expect(open).toContain("image_url");
    // Nothing reached ComfyUI either.
    expect(mock.uploads).toHaveLength(0);
    expect(mock.prompts).toHaveLength(0);
  });

  test("a host name that resolves to an internal address is refused the same way", async () => {
    const msg = await failure({ prompt: "x", image_url: `http://localhost:${internal.server.port}/a.png` });
    expect(internal.hits).toBe(0);
    expect(msg).not.toContain(String(internal.server.port));
    expect(msg).toBe(await failure({ prompt: "x", image_url: `http://127.0.0.1:${closedPort}/a.png` }));
  });
});

describe("comfyui image inputs: our own uploads", () => {
  test("a file id reaches the provider as a signed link and is read from the store, not over HTTP", async () => {
    const png = encodePng(5, 4, 9);
    const fileId = await upload(png);
    const id = await submitQueued(t, "c/img2img", { prompt: "x", image_url: fileId });
    const job = await finalJob(t.ctx, id);
    expect(job.error_message).toBeNull();
    expect(job.status).toBe("COMPLETED");
    expect(mock.uploads).toHaveLength(1);
    expect(mock.uploads[0]!.bytes).toEqual(png);
  });

  test("another account's file is refused: at submit, and by the reader for a job of this account", async () => {
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const foreign = await upload(encodePng(4, 4, 1), other.key);
    for (const ref of [foreign, signedFileUrl(t.ctx, foreign)]) {
      const res = await t.request("/v1/queue/c/img2img", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "x", image_url: ref }),
      });
      expect((await json<{ error: { code: string } }>(res)).error.code).toBe("unknown_file");
    }
    // A job that somehow carries it (the reader checks the owner again, at run time).
    for (const ref of [foreign, signedFileUrl(t.ctx, foreign)]) {
      const err = await read(ref).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).kind).toBe("input");
      expect((err as ProviderError).message).toContain("not a live file of this account");
    }
    // The owner reads it.
    expect((await read(foreign, other.account.id)).bytes).toEqual(encodePng(4, 4, 1));
  });

  test("a link to our own upload with a forged or expired signature is refused, without a fetch", async () => {
    // (At submit, links to our own uploads become file ids of the submitting account; a job's input
    // reaches the reader as the signed link the pool made, so the reader checks it again.)
    const mine = await upload(encodePng(4, 4, 2));
    const forged = new URL(signedFileUrl(t.ctx, mine));
    forged.searchParams.set("sig", "A".repeat(43));
    const expired = `${t.ctx.publicUrl}/v1/files/${mine}/content?exp=1&sig=${t.ctx.signer.sign(mine, 0, 1)}`;
    for (const link of [forged.href, expired]) {
      const err = await read(link).then(
        () => null,
        (e: unknown) => e,
      );
      expect((err as ProviderError).kind).toBe("input");
      expect((err as ProviderError).message).toContain("not a live file of this account");
    }
    // The same file through a good link, for contrast.
    expect((await read(signedFileUrl(t.ctx, mine))).bytes).toEqual(encodePng(4, 4, 2));
  });
});
