import { createHash } from "node:crypto";
import { sleep } from "../common.ts";
import {
  type MediaOutput,
  type Provider,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
} from "../types.ts";
import { encodeAnimation, encodePng, encodeSpeechWav } from "./media/index.ts";

/** Frame sizes of the sandbox video tiers (the encoder scales its frames down internally). */
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
 * The built-in provider: runs in-process and produces real media (PNG, WAV, animated GIF) sized by
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
    const result = this.produce(job, seed, controls.actual_units);
    job.log(`sandbox: produced ${result.outputs.length} output(s)`);
    return result;
  }

  private produce(job: ProviderJob, seed: number, actual: number | undefined): ProviderResult {
    const input = job.input;
    const model = job.model;
    const requested = (n: unknown, fallback: number) => (typeof n === "number" ? n : fallback);
    switch (model.kind) {
      case "image": {
        const count = Math.min(
          requested(input.num_images, model.default_units ?? 1),
          actual ?? Number.POSITIVE_INFINITY,
        );
        const w = requested(input.width, 512);
        const h = requested(input.height, 512);
        const outputs: MediaOutput[] = [];
        for (let i = 0; i < count; i++) {
          outputs.push({
            kind: "image",
            contentType: "image/png",
            bytes: encodePng(w, h, seed + i),
            width: w,
            height: h,
          });
        }
        return { outputs, actualUnits: actual ?? null, extra: { seed } };
      }
      case "upscale": {
        const scale = requested(input.scale, 2);
        const w = requested(input.width, 256) * scale;
        const h = requested(input.height, 256) * scale;
        return {
          outputs: [
            { kind: "image", contentType: "image/png", bytes: encodePng(w, h, seed), width: w, height: h },
          ],
          actualUnits: actual ?? null,
        };
      }
      case "audio": {
        const duration = Math.min(
          requested(input.duration, model.default_units ?? 1),
          actual ?? Number.POSITIVE_INFINITY,
        );
        const bytes = encodeSpeechWav(duration, seed);
        return {
          outputs: [{ kind: "audio", contentType: "audio/wav", bytes, duration }],
          actualUnits: actual ?? null,
        };
      }
      default: {
        // video and avatar: an animation of the delivered length
        const units =
          model.reference_video && input.video_url
            ? requested(input.input_duration_sec, 1)
            : requested(input.duration, model.default_units ?? 1);
        const duration = Math.max(1, Math.min(units, actual ?? Number.POSITIVE_INFINITY));
        const [w, h] = TIER_SIZE[String(input.resolution ?? model.resolutions?.[0] ?? "480p")] ?? [854, 480];
        const anim = encodeAnimation(duration, w, h, 10, seed);
        return {
          outputs: [
            {
              kind: "video",
              contentType: anim.contentType,
              bytes: anim.bytes,
              width: w,
              height: h,
              duration,
            },
          ],
          actualUnits: actual ?? null,
          extra: { seed },
        };
      }
    }
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

function seedOf(id: string): number {
  return createHash("sha256").update(id).digest().readUInt32BE(0);
}
