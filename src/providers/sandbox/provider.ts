import { createHash } from "node:crypto";
import { sleep } from "../common.ts";
import {
  type MediaOutput,
  type Provider,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
} from "../types.ts";
import { encodeMedia } from "./media/tasks.ts";

/** Frame sizes of the sandbox video tiers (the encoder scales its frames down, see videoSize). */
const TIER_SIZE: Record<string, [number, number]> = {
  "480p": [854, 480],
  "720p": [1280, 720],
  "1080p": [1920, 1080],
};

interface SandboxControls {
  delay_ms?: number;
  fail?: boolean;
  actual_units?: number;
}

/**
 * The built-in provider: runs in-process and produces real media (PNG, WAV, WebM/VP8 video) sized by
 * the request, so every flow works with no upstream. `sandbox` controls in the input make a job
 * slow (delay_ms, with progress lines in logs), fail, or deliver fewer units (actual_units).
 * Re-running a job is harmless (nothing outside this process saw it), so it is always resumable.
 */
export class SandboxProvider implements Provider {
  readonly name = "sandbox";

  resumable(): boolean {
    return true;
  }

  async run(job: ProviderJob): Promise<ProviderResult> {
    const controls = (job.input.sandbox ?? {}) as SandboxControls;
    const seed = typeof job.input.seed === "number" ? job.input.seed : seedOf(job.id);
    job.log(`sandbox: started attempt ${job.attempt} for ${job.model.id}`);
    await this.delay(controls.delay_ms ?? 0, job);
    if (controls.fail) {
      job.log("sandbox: failing as requested by the input");
      throw new ProviderError("failed", "The sandbox was asked to fail this job (sandbox.fail = true).");
    }
    const result = await this.produce(job, seed, controls.actual_units);
    job.log(`sandbox: produced ${result.outputs.length} output(s)`);
    return result;
  }

  /**
   * The delivered media. `actual_units` caps what is delivered (images, seconds, or megapixels of
   * output), and the files are exactly that: the settlement measures them and charges for them
   * (docs/money.md, "Charge equals delivery"), so the sandbox claims no units of its own. 0 units
   * delivers nothing, which the worker fails (nothing charged).
   */
  private async produce(job: ProviderJob, seed: number, actual: number | undefined): Promise<ProviderResult> {
    const input = job.input;
    const model = job.model;
    const requested = (n: unknown, fallback: number) => (typeof n === "number" ? n : fallback);
    const cap = actual ?? Number.POSITIVE_INFINITY;
    // Every encoding runs in a worker thread (src/lib/threads.ts), never on the event loop, and
    // stops when the job's signal aborts.
    const png = async (w: number, h: number, s: number): Promise<MediaOutput> => {
      const image = await encodeMedia({ op: "png", width: w, height: h, seed: s }, job.signal);
      return { kind: "image", contentType: image.contentType, bytes: image.bytes, width: w, height: h };
    };
    if (model.kind === "image" || (model.kind === "upscale" && model.unit !== "second")) {
      let count: number;
      let w: number;
      let h: number;
      if (model.kind === "upscale") {
        // The source the job was priced on: the uploaded file's measured size wins over declared values.
        const source = (await job.inputImageSize?.("image_url")) ?? {
          width: requested(input.width, 256),
          height: requested(input.height, 256),
        };
        const scale = requested(input.scale, 2);
        count = 1;
        w = source.width * scale;
        h = source.height * scale;
      } else {
        count = requested(input.num_images, model.unit === "image" ? (model.default_units ?? 1) : 1);
        w = requested(input.width, 512);
        h = requested(input.height, 512);
      }
      if (model.unit === "image") count = Math.min(count, cap);
      else if (model.unit === "megapixel" && actual !== undefined) {
        const fitted = fitPixels(w, h, Math.floor((actual * 1_000_000) / count));
        if (!fitted) count = 0;
        else [w, h] = fitted;
      }
      const images: Promise<MediaOutput>[] = [];
      for (let i = 0; i < count; i++) images.push(png(w, h, seed + i));
      return { outputs: await Promise.all(images), extra: { seed } };
    }
    if (model.kind === "audio") {
      const duration = Math.min(requested(input.duration, model.default_units ?? 1), cap);
      if (duration <= 0) return { outputs: [] };
      const audio = await encodeMedia({ op: "wav", duration, seed }, job.signal);
      return { outputs: [{ kind: "audio", contentType: audio.contentType, bytes: audio.bytes, duration }] };
    }
    // video, avatar and video upscales: a WebM video of the delivered length (avatars: a talking
    // head lip-synced to the sandbox speech of the same seed and prompt)
    const units =
      model.reference_video && input.video_url
        ? requested(input.input_duration_sec, 1)
        : requested(input.duration, model.default_units ?? 1);
    const duration = Math.min(units, cap);
    if (duration <= 0) return { outputs: [], extra: { seed } };
    const [w, h] = TIER_SIZE[String(input.resolution ?? model.resolutions?.[0] ?? "480p")] ?? [854, 480];
    const text =
      typeof input.text === "string"
        ? input.text
        : typeof input.prompt === "string"
          ? input.prompt
          : undefined;
    const video = await encodeMedia(
      {
        op: "video",
        duration,
        width: w,
        height: h,
        fps: 10,
        seed,
        style: model.kind === "avatar" ? "avatar" : "scene",
        text,
      },
      job.signal,
    );
    return {
      outputs: [
        {
          kind: "video",
          contentType: video.contentType,
          bytes: video.bytes,
          // The video's real frame size (the encoder scales the tier's frame down; see videoSize).
          width: video.width,
          height: video.height,
          duration: video.durationMs! / 1000,
        },
      ],
      extra: { seed },
    };
  }

  /** Sleeps delay_ms in up to 10 steps, logging progress; aborts promptly on the job's signal. */
  private async delay(ms: number, job: ProviderJob): Promise<void> {
    if (ms <= 0) return;
    const steps = Math.min(10, Math.max(1, Math.floor(ms / 100)));
    for (let i = 1; i <= steps; i++) {
      await sleep(ms / steps, job.signal);
      job.log(`sandbox: progress ${Math.round((i / steps) * 100)}%`);
    }
  }
}

/** The largest w' x h' <= maxPixels with the aspect of w x h (unchanged if it fits), or null below 1 pixel. */
export function fitPixels(w: number, h: number, maxPixels: number): [number, number] | null {
  if (w * h <= maxPixels) return [w, h];
  if (maxPixels < 1) return null;
  const f = Math.sqrt(maxPixels / (w * h));
  let fw = Math.max(1, Math.floor(w * f));
  let fh = Math.max(1, Math.floor(h * f));
  while (fw * fh > maxPixels) {
    if (fw >= fh && fw > 1) fw--;
    else if (fh > 1) fh--;
    else return null;
  }
  return [fw, fh];
}

function seedOf(id: string): number {
  return createHash("sha256").update(id).digest().readUInt32BE(0);
}
