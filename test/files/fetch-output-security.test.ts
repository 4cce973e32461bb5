import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalBlobBackend } from "../../src/files/blob-backend-local.ts";
import { fetchOutputToBlobs } from "../../src/files/fetch-output.ts";

/**
 * An upstream's output link is fetched by the gateway. Some models hand back a URL from their
 * input, so what the link answered must not reach the client: an error there used to say "answered
 * 404" for an open port and "(ConnectionRefused)" for a closed one (issue 31, item 1's audit).
 */
const blobs = new LocalBlobBackend(mkdtempSync(join(tmpdir(), "gengate-out-")));
const open = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response("internal admin page", { status: 404 }),
});
const shut = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
const closedPort = shut.port!;
shut.stop(true);
afterAll(() => open.stop(true));

async function failure(url: string): Promise<Error & { kind?: string }> {
  const signal = new AbortController().signal;
  return await fetchOutputToBlobs(url, blobs, "req_out", 0, "image/png", signal).then(
    () => {
      throw new Error("expected the download to fail");
    },
    (err: Error) => err,
  );
}

describe("output downloads: failures say nothing about the link", () => {
  test("a link that answers 404 and a closed port fail with the same fixed message", async () => {
    const a = await failure(`http://127.0.0.1:${open.port}/out.png`);
    const b = await failure(`http://127.0.0.1:${closedPort}/out.png`);
    expect(a.kind).toBe("failed");
    expect(a.message).toBe(b.message);
    for (const leak of ["404", "internal admin", String(open.port), String(closedPort), "Connection"]) {
      expect(a.message).not.toContain(leak);
    }
  });
});
