import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { encodePng, encodeVideo } from "../../src/providers/sandbox/media/index.ts";
import { startFunded } from "../helpers/api.ts";

type Err = { error: { code: string } };
let s: Awaited<ReturnType<typeof startFunded>>;
beforeAll(async () => {
  s = await startFunded("[limits]\nupload_max_bytes = 2000000\n");
});
afterAll(() => s.cleanup());
const uploadsDir = () => join(s.dataDir, "files", "uploads");
const leftovers = () => readdirSync(uploadsDir()).filter((f) => f.endsWith(".part"));
const upload = (body: Uint8Array | string, headers: Record<string, string>) =>
  s.fetch("/v1/files", { method: "POST", body, headers });

describe("POST /v1/files", () => {
  test("201 with the contract's fields; metadata, content and delete", async () => {
    const png = encodePng(40, 30, 7);
    const res = await upload(png, { "content-type": "image/png" });
    expect(res.status).toBe(201);
    const f = (await res.json()) as Record<string, unknown>;
    expect(f.file_id).toMatch(/^file_[0-9A-Za-z]{24}$/);
    expect(f).toMatchObject({ content_type: "image/png", size: png.length, width: 40, height: 30 });
    expect(f.sha256).toBe(new Bun.CryptoHasher("sha256").update(png).digest("hex"));
    expect(typeof f.created_at).toBe("string");
    expect(Date.parse(f.expires_at as string) - Date.parse(f.created_at as string)).toBe(7 * 86400_000);
    expect(((await (await s.fetch(`/v1/files/${f.file_id}`)).json()) as { size: number }).size).toBe(
      png.length,
    );
    const content = await s.fetch(`/v1/files/${f.file_id}/content`);
    expect(Buffer.from(await content.arrayBuffer()).equals(Buffer.from(png))).toBe(true);
    expect((await s.fetch(`/v1/files/${f.file_id}`, { method: "DELETE" })).status).toBe(200);
    expect((await s.fetch(`/v1/files/${f.file_id}`)).status).toBe(404);
    expect(readdirSync(uploadsDir())).not.toContain(f.file_id);
  });

  test("a file id works as a job input end to end", async () => {
    const f = (await (await upload(encodePng(64, 64, 1), { "content-type": "image/png" })).json()) as {
      file_id: string;
    };
    const run = await s.fetch("/v1/run/sandbox/avatar", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ image_url: f.file_id, text: "hello there", duration: 2 }),
    });
    expect(run.status).toBe(200);
    expect(((await run.json()) as { video: { content_type: string } }).video.content_type).toBe("video/webm");
  });

  test("a WebM video (the sandbox's own output) is accepted as video/webm and not as an image", async () => {
    const webm = encodeVideo(1, 64, 48, 10, 2).bytes;
    const res = await upload(webm, { "content-type": "video/webm" });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ content_type: "video/webm", size: webm.length });
    const wrong = await upload(webm, { "content-type": "image/png" });
    expect(wrong.status).toBe(415);
    expect(((await wrong.json()) as Err).error.code).toBe("unsupported_media_type");
  });

  test.each([
    ["no Content-Type", encodePng(8, 8, 1), {}, 415, "unsupported_media_type"],
    ["a type that is not media", "hello", { "content-type": "text/plain" }, 415, "unsupported_media_type"],
    [
      "PNG bytes labelled audio/wav",
      encodePng(8, 8, 1),
      { "content-type": "audio/wav" },
      415,
      "unsupported_media_type",
    ],
    [
      "HTML labelled image/png",
      "<html><script>alert(1)</script></html>",
      { "content-type": "image/png" },
      415,
      "unsupported_media_type",
    ],
    ["an empty body", new Uint8Array(0), { "content-type": "image/png" }, 400, "validation_error"],
    [
      "over the limit by Content-Length",
      new Uint8Array(2_000_001),
      { "content-type": "image/png" },
      413,
      "payload_too_large",
    ],
  ] as const)("%s: %i, nothing stored", async (_label, body, headers, status, code) => {
    const before = readdirSync(uploadsDir()).length;
    const res = await upload(body as Uint8Array | string, headers as Record<string, string>);
    expect(res.status).toBe(status);
    expect(((await res.json()) as Err).error.code).toBe(code);
    expect(readdirSync(uploadsDir()).length).toBe(before);
  });

  test("over the limit without Content-Length (chunked): refused mid-stream, nothing left", async () => {
    const png = encodePng(8, 8, 1);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent === 0) c.enqueue(png);
        else if (sent < 3_000_000) c.enqueue(new Uint8Array(100_000));
        else c.close();
        sent += sent === 0 ? png.length : 100_000;
      },
    });
    const res = await s.fetch("/v1/files", {
      method: "POST",
      body: stream,
      headers: { "content-type": "image/png" },
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    await Bun.sleep(50);
    expect(leftovers()).toEqual([]);
  });

  test("an upload interrupted half-way leaves no file and no record", async () => {
    const before = readdirSync(uploadsDir()).length;
    const url = new URL(s.url);
    const png = encodePng(8, 8, 1);
    await new Promise<void>((done) => {
      const sock = connect(Number(url.port), url.hostname, () => {
        sock.write(
          `POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Key ${s.defaultKey}\r\nContent-Type: image/png\r\nContent-Length: 1000000\r\n\r\n`,
        );
        sock.write(png);
        sock.write(Buffer.alloc(400_000));
        setTimeout(() => {
          sock.destroy();
          done();
        }, 100);
      });
    });
    await Bun.sleep(300);
    expect(leftovers()).toEqual([]);
    expect(readdirSync(uploadsDir()).length).toBe(before);
  });

  test("Idempotency-Key: same bytes replay the same file; other bytes are 409", async () => {
    const headers = { "content-type": "image/png", "idempotency-key": `up-${Date.now()}` };
    const a = (await (await upload(encodePng(8, 8, 3), headers)).json()) as { file_id: string };
    const again = await upload(encodePng(8, 8, 3), headers);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as { file_id: string }).file_id).toBe(a.file_id);
    expect((await upload(encodePng(8, 8, 4), headers)).status).toBe(409);
  });

  test("ids with path characters are clear 4xx", async () => {
    for (const id of ["..%2F..%2Fetc%2Fpasswd", "file_..", "file_AAAA%2F..%2Fx"]) {
      const res = await s.fetch(`/v1/files/${id}`);
      expect([400, 404]).toContain(res.status);
    }
  });
});

describe("storage floor", () => {
  test("below min_free_mb uploads are 507 insufficient_storage, and /readyz says so", async () => {
    const full = await startFunded("[files]\nmin_free_mb = 1000000000\n");
    try {
      const res = await full.fetch("/v1/files", {
        method: "POST",
        body: encodePng(8, 8, 1),
        headers: { "content-type": "image/png" },
      });
      expect(res.status).toBe(507);
      expect(((await res.json()) as Err).error.code).toBe("insufficient_storage");
      const ready = (await (await fetch(`${full.url}/readyz`)).json()) as {
        storage: { accepting_uploads: boolean };
      };
      expect(ready.storage.accepting_uploads).toBe(false);
    } finally {
      full.cleanup();
    }
  });
});

describe("memory stays flat while streaming", () => {
  const SIZE = Number(process.env.UPLOAD_TEST_BYTES ?? 1024 ** 3);
  const rssOf = (pid: number) =>
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

  /** Streams SIZE bytes (a PNG header, then zeros) to url and returns the peak RSS growth of pid. */
  async function streamAndMeasure(pid: number, url: string, headers: Record<string, string>) {
    const before = rssOf(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssOf(pid));
    }, 20);
    const first = new Uint8Array(1024 * 1024);
    first.set(encodePng(8, 8, 1));
    const rest = new Uint8Array(1024 * 1024);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= SIZE) return c.close();
        c.enqueue(sent === 0 ? first : rest);
        sent += first.length;
      },
    });
    const res = await fetch(url, { method: "POST", body: stream, headers, duplex: "half" } as RequestInit);
    clearInterval(sampler);
    return { res, growth: peak - before };
  }

  test(`a ${Math.round(SIZE / 1024 ** 2)} MiB upload grows RSS no more than a bare Bun.serve reading the same body (+8 MB)`, async () => {
    // The floor: Bun's own request-body buffering, measured in the same run.
    const bare = Bun.spawn(
      [
        process.execPath,
        "-e",
        'const s = Bun.serve({ port: 0, maxRequestBodySize: Number.MAX_SAFE_INTEGER, async fetch(r) { let n = 0; for await (const c of r.body) n += c.length; return new Response(String(n)); } }); process.stdout.write(String(s.port) + "\\n");',
      ],
      { stdout: "pipe" },
    );
    const reader = bare.stdout.getReader();
    const barePort = new TextDecoder().decode((await reader.read()).value).trim();
    await Bun.sleep(100);
    const floor = await streamAndMeasure(bare.pid, `http://127.0.0.1:${barePort}/`, {});
    bare.kill();

    const big = await startFunded(`[limits]\nupload_max_bytes = ${SIZE + 1}\n[files]\nmin_free_mb = 0\n`);
    try {
      const ours = await streamAndMeasure(big.proc.pid, `${big.url}/v1/files`, {
        authorization: `Key ${big.defaultKey}`,
        "content-type": "image/png",
      });
      expect(ours.res.status).toBe(201);
      expect(((await ours.res.json()) as { size: number }).size).toBe(SIZE);
      console.log(
        `RSS growth over ${SIZE} bytes: gengate +${(ours.growth / 1024 ** 2).toFixed(1)} MB, bare Bun.serve +${(floor.growth / 1024 ** 2).toFixed(1)} MB`,
      );
      expect(ours.growth).toBeLessThan(floor.growth + 8 * 1024 * 1024);
    } finally {
      big.cleanup();
    }
  }, 120_000);
});
