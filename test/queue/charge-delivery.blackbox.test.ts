import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sniffImageSize } from "../../src/lib/image-size.ts";
import { bytesSource, measureMedia } from "../../src/providers/measure.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { pollUntil, startFunded } from "../helpers/api.ts";

/**
 * Issue 13, "Money": a charge equals what was delivered, measured from the delivered files, and is
 * never above the hold. Reproduces the upscale bug (an uploaded 512x512 source was charged as a
 * 1024x1024 output but delivered 512x512) and checks every sandbox kind end to end.
 */
type Json = Record<string, any>;
let s: Awaited<ReturnType<typeof startFunded>>;
beforeAll(async () => {
  s = await startFunded();
});
afterAll(() => s.cleanup());

const upload = async (bytes: Uint8Array, type = "image/png") =>
  (await (
    await s.fetch("/v1/files", { method: "POST", body: bytes, headers: { "content-type": type } })
  ).json()) as Json;

/** Submits, waits for a final state, and returns the record plus the delivered files' bytes. */
async function run(model: string, body: unknown) {
  const q = (await (await s.post(`/v1/queue/${model}`, body)).json()) as Json;
  expect(q.request_id).toBeString();
  const rec = await pollUntil(
    async () => (await (await s.get(`/v1/requests/${q.request_id}`)).json()) as Json,
    (r) => ["COMPLETED", "FAILED"].includes(r.status),
  );
  const files: Uint8Array[] = [];
  for (const url of rec.output_urls as string[])
    files.push(new Uint8Array(await (await fetch(url)).arrayBuffer()));
  const output =
    rec.status === "COMPLETED"
      ? ((await (await s.get(`/v1/requests/${q.request_id}/response`)).json()) as Json)
      : null;
  return { rec, files, output };
}

/** ceil(pixels x price / 1e6), the per-megapixel formula. */
const perMp = (pixels: number, price: number) => Math.ceil((pixels * price) / 1_000_000);

describe("sandbox/upscale of an uploaded file", () => {
  test("delivers the measured source x scale, and is charged exactly that", async () => {
    const f = await upload(encodePng(512, 384, 3));
    const est = (await (
      await s.post("/v1/estimate", { model_id: "sandbox/upscale", input: { image_url: f.file_id } })
    ).json()) as Json;
    expect(est.price_usd_micro).toBe(String(perMp(1024 * 768, 2000)));
    const { rec, files, output } = await run("sandbox/upscale", { image_url: f.file_id });
    expect(rec.status).toBe("COMPLETED");
    expect(sniffImageSize(files[0]!)).toMatchObject({ width: 1024, height: 768 });
    expect(output!.images[0]).toMatchObject({ width: 1024, height: 768 });
    expect(rec.price.charged_usd_micro).toBe(String(perMp(1024 * 768, 2000)));
    expect(rec.price.charged_usd_micro).toBe(rec.price.quoted_usd_micro);
  });

  test("the issue's case: a 512x512 upload at scale 2 is a 1024x1024 output charged 2,098", async () => {
    const f = await upload(encodePng(512, 512, 4));
    const { rec, files } = await run("sandbox/upscale", { image_url: f.file_id, scale: 2 });
    expect(sniffImageSize(files[0]!)).toMatchObject({ width: 1024, height: 1024 });
    expect(rec.price.charged_usd_micro).toBe("2098");
  });

  test("declared width/height do not override the measured file", async () => {
    const f = await upload(encodePng(300, 200, 5));
    const { rec, files } = await run("sandbox/upscale", {
      image_url: f.file_id,
      width: 64,
      height: 64,
      scale: 3,
    });
    expect(sniffImageSize(files[0]!)).toMatchObject({ width: 900, height: 600 });
    expect(rec.price.charged_usd_micro).toBe(String(perMp(900 * 600, 2000)));
  });

  test("actual_units caps the delivered megapixels; the charge follows the delivered file", async () => {
    const f = await upload(encodePng(1000, 1000, 6));
    const { rec, files } = await run("sandbox/upscale", {
      image_url: f.file_id,
      scale: 2,
      sandbox: { actual_units: 1 },
    });
    expect(rec.status).toBe("COMPLETED");
    const size = sniffImageSize(files[0]!)!;
    expect(size.width * size.height).toBeLessThanOrEqual(1_000_000);
    expect(rec.price.charged_usd_micro).toBe(String(perMp(size.width * size.height, 2000)));
    expect(BigInt(rec.price.charged_usd_micro)).toBeLessThan(BigInt(rec.price.quoted_usd_micro));
  });
});

describe("the other sandbox kinds are charged for the files they deliver", () => {
  test("image: 2 of 4 images delivered -> 2 images charged", async () => {
    const { rec, files } = await run("sandbox/image", {
      prompt: "x",
      num_images: 4,
      width: 64,
      height: 64,
      sandbox: { actual_units: 2 },
    });
    expect(files.length).toBe(2);
    expect(rec.price.quoted_usd_micro).toBe("40000");
    expect(rec.price.charged_usd_micro).toBe("20000");
    expect(rec.price.actual_units).toBe("2");
  });

  test("video: 3 s of 5 s at 720p -> 3 s at the 720p price; the output states the file's real size", async () => {
    const { rec, files, output } = await run("sandbox/video", {
      prompt: "x",
      duration: 5,
      resolution: "720p",
      sandbox: { actual_units: 3 },
    });
    expect(rec.price.quoted_usd_micro).toBe("200000");
    expect(rec.price.charged_usd_micro).toBe("120000");
    // The file's own header says its size and duration (a WebM: Info Duration, the track's pixels).
    const measured = measureMedia(bytesSource(files[0]!));
    expect(measured).toMatchObject({ duration: 3, width: 480, height: 270 });
    expect(output!.video).toMatchObject({
      content_type: "video/webm",
      duration: 3,
      width: measured.width,
      height: measured.height,
    });
  });

  test("avatar and speech: charged for the measured seconds", async () => {
    const avatar = await run("sandbox/avatar", {
      image_url: "https://example.com/a.png",
      duration: 6,
      sandbox: { actual_units: 2 },
    });
    expect(avatar.rec.price.charged_usd_micro).toBe("60000");
    const speech = await run("sandbox/speech", { text: "hi", duration: 8, sandbox: { actual_units: 5 } });
    expect(speech.rec.price.charged_usd_micro).toBe("25000");
    expect(speech.output!.audio).toMatchObject({ duration: 5 });
  });

  test("actual_units 0 delivers nothing: FAILED, nothing charged", async () => {
    const { rec } = await run("sandbox/image", { prompt: "x", num_images: 2, sandbox: { actual_units: 0 } });
    expect(rec.status).toBe("FAILED");
    expect(rec.price.charged_usd_micro).toBe("0");
  });

  test("delivering in full charges exactly the quote", async () => {
    const { rec } = await run("sandbox/video", { prompt: "x", duration: 4, resolution: "1080p" });
    expect(rec.price.charged_usd_micro).toBe(rec.price.quoted_usd_micro);
    expect(rec.price.actual_units).toBe("4");
  });
});
