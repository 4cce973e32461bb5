import type { ProviderSettings } from "../../config/schema.ts";
import { sniffImageSize } from "../../lib/image-size.ts";
import { resolveAllowedAddresses } from "../../webhooks/url-policy.ts";
import { wavSeconds } from "../measure.ts";
import {
  type MediaOutput,
  type Provider,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
} from "../types.ts";
import { mapInput, upstreamDetail, upstreamFetch, upstreamJson } from "../upstream-client.ts";

/**
 * GPT image models (gpt-image-1, gpt-image-1-mini, chatgpt-image-latest, ...) always answer base64 and
 * refuse `response_format` with a 400; dall-e-2 and dall-e-3 take it (and answer links without it).
 * openai-node/src/resources/images.ts, ImageGenerateParams.response_format: "The format in which
 * generated images with `dall-e-2` and `dall-e-3` are returned. [...] This parameter isn't supported
 * for `gpt-image-1` which will always return base64-encoded images." Other OpenAI-compatible servers
 * are asked for base64 too; whichever of `b64_json` or `url` comes back is read.
 */
const ALWAYS_BASE64 = /(^|\/)(chatgpt-image|gpt-image)/i;

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
      if (!ALWAYS_BASE64.test(model)) form.set("response_format", "b64_json");
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
            ...(ALWAYS_BASE64.test(model) ? {} : { response_format: "b64_json" }),
          }),
        },
        call,
      );
    }
    const data = answer.body?.data;
    if (!Array.isArray(data) || data.length === 0)
      throw new ProviderError("failed", "The upstream answered without images.");
    const outputs: MediaOutput[] = [];
    for (const [i, d] of data.entries()) outputs.push(await this.image(d, i));
    // The settlement counts and measures the delivered images (docs/money.md, "Charge equals delivery").
    return { outputs };
  }

  /**
   * One image of the answer. Base64: the content type and pixel size are read from the bytes (a GPT
   * image model may answer JPEG or WebP, by its output_format). A link: fetched by the worker, which
   * also types it from its bytes (src/files/fetch-output.ts), and only where the outbound policy
   * allows: the upstream's own origin (a self-hosted server serving its own files), else a host whose
   * every address is public, so an upstream's answer cannot make the gateway read the operator's
   * network (cloud metadata, internal services) and hand it to a client as an output.
   */
  private async image(d: { b64_json?: unknown; url?: unknown } | null, i: number): Promise<MediaOutput> {
    if (typeof d?.b64_json === "string") {
      const bytes = Buffer.from(d.b64_json, "base64");
      const sniffed = sniffImageSize(bytes);
      if (!sniffed) throw new ProviderError("failed", `Image ${i} of the upstream's answer is not an image.`);
      const { format, width, height } = sniffed;
      return { kind: "image", contentType: `image/${format}`, bytes, width, height };
    }
    if (typeof d?.url === "string" && /^https?:\/\//.test(d.url)) {
      if (!(await this.linkAllowed(d.url)))
        throw new ProviderError(
          "failed",
          `Image ${i} of the upstream's answer links to a non-public address; it was not fetched.`,
        );
      // The type from the link's bytes once fetched; this one only if they are not recognised.
      return { kind: "image", contentType: "image/png", url: d.url };
    }
    throw new ProviderError("failed", `Image ${i} of the upstream's answer has neither b64_json nor url.`);
  }

  private async linkAllowed(raw: string): Promise<boolean> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return false;
    }
    if (url.username !== "" || url.password !== "") return false;
    if (url.origin === new URL(this.cfg.baseUrl).origin) return true;
    try {
      await resolveAllowedAddresses(url, { allowPrivateCidrs: [] });
      return true;
    } catch {
      return false;
    }
  }

  private async speech(
    job: ProviderJob,
    model: string,
    input: Record<string, unknown>,
  ): Promise<ProviderResult> {
    const res = await upstreamFetch(
      `${this.cfg.baseUrl}/audio/speech`,
      {
        method: "POST",
        headers: this.headers(),
        body: JSON.stringify({
          model,
          input: input.text,
          voice: input.voice ?? "alloy",
          response_format: "wav",
        }),
      },
      { timeoutMs: this.cfg.timeoutMs, signal: job.signal, secret: this.cfg.apiKey },
    );
    if (!res.ok) {
      const failed = res.status >= 500;
      throw new ProviderError(
        failed ? "failed" : "input",
        failed ? "The upstream failed the speech request." : "The upstream refused the speech request.",
        {
          status: res.status,
          detail: upstreamDetail(await res.text().catch(() => "")),
          secret: this.cfg.apiKey,
        },
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
