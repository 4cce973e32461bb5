import type { ProviderSettings } from "../../config/schema.ts";
import { wavSeconds } from "../measure.ts";
import {
  type MediaOutput,
  type Provider,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
} from "../types.ts";
import { mapInput, redact, upstreamJson } from "../upstream-http.ts";

/** Largest source image read for an edit: the cap of ComfyUI's image inputs too. */
const MAX_EDIT_IMAGE_BYTES = 50 * 1024 * 1024;

/**
 * Images (/images/generations, /images/edits) and speech (/audio/speech) on any OpenAI-compatible
 * server. These calls are synchronous: there is no upstream id to resume, so a job whose worker
 * died during the call is failed and released rather than submitted twice.
 */
export class OpenAIMediaProvider implements Provider {
  constructor(
    readonly name: string,
    private readonly cfg: ProviderSettings,
  ) {}

  resumable(): boolean {
    return false;
  }

  async run(job: ProviderJob): Promise<ProviderResult> {
    const model = job.model.upstream_model ?? job.model.id;
    const input = mapInput(job.input, job.model.input_map);
    if (job.model.kind === "audio") return this.speech(job, model, input);
    if (job.model.kind === "image" || job.model.kind === "upscale") return this.images(job, model, input);
    throw new ProviderError(
      "failed",
      `The openai provider serves text, image and audio models, not ${job.model.kind}.`,
    );
  }

  private headers(json = true): Record<string, string> {
    return {
      ...(json ? { "content-type": "application/json" } : {}),
      ...(this.cfg.apiKey ? { authorization: `Bearer ${this.cfg.apiKey}` } : {}),
    };
  }

  private async images(
    job: ProviderJob,
    model: string,
    input: Record<string, unknown>,
  ): Promise<ProviderResult> {
    const n = typeof input.num_images === "number" ? input.num_images : 1;
    const size =
      typeof input.width === "number" && typeof input.height === "number"
        ? `${input.width}x${input.height}`
        : undefined;
    const call = { timeoutMs: this.cfg.timeoutMs, signal: job.signal, secret: this.cfg.apiKey };
    let answer: { body: { data?: { b64_json?: string; url?: string }[] } };
    if (typeof input.image_url === "string") {
      // Edits take the source image as a multipart file: our own uploads are read from the store,
      // any other URL is fetched through the outbound policy (SSRF), with a fixed message on failure.
      const src = await job.readInput(input.image_url, {
        what: "image_url",
        maxBytes: MAX_EDIT_IMAGE_BYTES,
        timeoutMs: 60_000,
      });
      const form = new FormData();
      form.set("model", model);
      form.set("prompt", String(input.prompt ?? ""));
      form.set("n", String(n));
      if (size) form.set("size", size);
      form.set("response_format", "b64_json");
      form.set(
        "image",
        new Blob([src.bytes as Uint8Array<ArrayBuffer>], { type: src.contentType ?? "image/png" }),
        "image.png",
      );
      answer = await upstreamJson(
        `${this.cfg.baseUrl}/images/edits`,
        { method: "POST", headers: this.headers(false), body: form },
        call,
      );
    } else {
      answer = await upstreamJson(
        `${this.cfg.baseUrl}/images/generations`,
        {
          method: "POST",
          headers: this.headers(),
          body: JSON.stringify({
            model,
            prompt: input.prompt,
            n,
            ...(size ? { size } : {}),
            response_format: "b64_json",
          }),
        },
        call,
      );
    }
    const data = answer.body?.data;
    if (!Array.isArray(data) || data.length === 0)
      throw new ProviderError("failed", "The upstream answered without images.");
    const outputs: MediaOutput[] = data.map((d, i) => {
      if (typeof d?.b64_json === "string") {
        return {
          kind: "image",
          contentType: "image/png",
          bytes: Buffer.from(d.b64_json, "base64"),
          ...sizeOf(size),
        };
      }
      if (typeof d?.url === "string" && /^https?:\/\//.test(d.url))
        return { kind: "image", contentType: "image/png", url: d.url, ...sizeOf(size) };
      throw new ProviderError("failed", `Image ${i} of the upstream's answer has neither b64_json nor url.`);
    });
    // The settlement counts and measures the delivered images (docs/money.md, "Charge equals delivery").
    return { outputs };
  }

  private async speech(
    job: ProviderJob,
    model: string,
    input: Record<string, unknown>,
  ): Promise<ProviderResult> {
    let res: Response;
    try {
      res = await fetch(`${this.cfg.baseUrl}/audio/speech`, {
        method: "POST",
        headers: this.headers(),
        body: JSON.stringify({
          model,
          input: input.text,
          voice: input.voice ?? "alloy",
          response_format: "wav",
        }),
        signal: AbortSignal.any([job.signal, AbortSignal.timeout(this.cfg.timeoutMs)]),
      });
    } catch (err) {
      if (job.signal.aborted) throw err;
      throw new ProviderError("capacity", "The upstream could not be reached.");
    }
    if (res.status === 429 || res.status === 503)
      throw new ProviderError("capacity", `The upstream is busy (${res.status}).`);
    if (!res.ok) {
      const text = redact((await res.text()).slice(0, 300), this.cfg.apiKey);
      throw new ProviderError(
        res.status >= 500 ? "failed" : "input",
        `The upstream answered ${res.status}: ${text}`,
      );
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    const duration = wavSeconds(bytes);
    return {
      outputs: [
        { kind: "audio", contentType: "audio/wav", bytes, ...(duration !== null ? { duration } : {}) },
      ],
    };
  }
}

function sizeOf(size: string | undefined) {
  if (!size) return {};
  const [w, h] = size.split("x").map(Number);
  return { width: w, height: h };
}
