import type { Model } from "../../../src/catalog/model.ts";
import type { ProviderSettings } from "../../../src/config/schema.ts";
import type { BlobBackend } from "../../../src/files/blob-backend.ts";
import { inputReader } from "../../../src/files/input-reader.ts";
import { LinkSigner } from "../../../src/files/signing.ts";
import type { FileStore } from "../../../src/files/store.ts";
import { createComfyProvider } from "../../../src/providers/comfyui/index.ts";
import type { ProviderJob } from "../../../src/providers/types.ts";
import { makeTestApp } from "../../helpers/context.ts";

/** An SDXL-like API-format workflow with placeholders. */
export const SDXL = {
  "3": {
    class_type: "KSampler",
    inputs: {
      seed: "{{seed}}",
      steps: "{{steps}}",
      cfg: "{{cfg}}",
      sampler_name: "euler",
      scheduler: "normal",
      denoise: 1,
      model: ["4", 0],
      positive: ["6", 0],
      negative: ["7", 0],
      latent_image: ["5", 0],
    },
  },
  "4": { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: "sd_xl_base_1.0.safetensors" } },
  "5": {
    class_type: "EmptyLatentImage",
    inputs: { width: "{{width}}", height: "{{height}}", batch_size: 1 },
  },
  "6": { class_type: "CLIPTextEncode", inputs: { text: "{{prompt}}", clip: ["4", 1] } },
  "7": { class_type: "CLIPTextEncode", inputs: { text: "blurry, low quality", clip: ["4", 1] } },
  "8": { class_type: "VAEDecode", inputs: { samples: ["3", 0], vae: ["4", 2] } },
  "9": { class_type: "SaveImage", inputs: { filename_prefix: "gengate_{{seed}}", images: ["8", 0] } },
};

export const SDXL_SCHEMA = {
  type: "object",
  required: ["prompt"],
  properties: {
    prompt: { type: "string" },
    seed: { type: "integer", default: 0 },
    steps: { type: "integer", default: 20 },
    cfg: { type: "number", default: 7 },
    width: { type: "integer", default: 1024 },
    height: { type: "integer", default: 1024 },
  },
};

/** An img2img workflow: LoadImage reads {{image_url}} after the gateway uploaded it. */
export const IMG2IMG = {
  "10": { class_type: "LoadImage", inputs: { image: "{{image_url}}" } },
  "9": { class_type: "SaveImage", inputs: { filename_prefix: "{{prompt}}", images: ["10", 0] } },
};
export const IMG2IMG_SCHEMA = {
  type: "object",
  properties: { prompt: { type: "string" }, image_url: { type: "string" } },
};

export function settings(baseUrl: string, over: Partial<ProviderSettings> = {}): ProviderSettings {
  return {
    type: "comfyui",
    baseUrl,
    apiKey: null,
    timeoutMs: 2000,
    concurrency: 1,
    pollIntervalMs: 20,
    workflows: { sdxl: SDXL, img2img: IMG2IMG },
    ...over,
  };
}

export function model(over: Partial<Model> = {}): Model {
  return {
    id: "local/sdxl",
    kind: "image",
    unit: "image",
    description: "",
    price_usd_micro: 1000,
    input_price_usd_micro: null,
    output_price_usd_micro: null,
    max: 4,
    context: null,
    resolutions: null,
    resolution_prices_usd_micro: null,
    default_units: 1,
    reference_video: false,
    input_schema: SDXL_SCHEMA,
    provider: "comfy",
    upstream_model: "sdxl",
    input_map: {},
    routes: [],
    routing: "priority",
    time_limit_seconds: 60,
    concurrency: null,
    ...over,
  };
}

export interface FakeJob extends ProviderJob {
  controller: AbortController;
  logs: string[];
  upstreamIds: string[];
}

export function fakeJob(
  input: Record<string, unknown>,
  over: {
    model?: Model;
    upstreamId?: string | null;
    onUpstreamId?: (id: string) => void;
    /** The outbound policy's allow-list for image URLs (the mock file servers listen on 127.0.0.1). */
    allowPrivateCidrs?: string[];
  } = {},
): FakeJob {
  const controller = new AbortController();
  // The gateway's own reader, over an account without uploads: unit tests give URLs only (the
  // uploads path is tested with a real app in input-security.test.ts).
  const read = inputReader({
    publicUrl: "http://gengate.test",
    signer: new LinkSigner(["test-secret-test-secret"]),
    files: { getLive: async () => null } as unknown as FileStore,
    blobs: {} as BlobBackend,
    policy: () => ({ allowPrivateCidrs: over.allowPrivateCidrs ?? [] }),
  });
  const job: FakeJob = {
    id: "req_test1",
    model: over.model ?? model(),
    input,
    attempt: 1,
    upstreamId: over.upstreamId ?? null,
    signal: controller.signal,
    controller,
    logs: [],
    upstreamIds: [],
    log: (m) => job.logs.push(m),
    setUpstreamId: async (id) => {
      job.upstreamIds.push(id);
      over.onUpstreamId?.(id);
    },
    readInput: (value, o) => read(value, "acc_test", { ...o, signal: controller.signal }),
  };
  return job;
}

/** The rejection of a promise (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error & { kind?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { kind?: string };
  }
  throw new Error("expected the promise to reject");
}

/** A service on the operator's network (127.0.0.1) that counts the requests reaching it. */
export function internalService(answer: () => Response) {
  const state = {
    hits: 0,
    server: Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => {
        state.hits++;
        return answer();
      },
    }),
  };
  return state;
}

/**
 * An in-process gateway whose model "c/<workflow>" (1 image, $0.001) runs on the mock ComfyUI at
 * `baseUrl`, its account funded with $1000. Tests start their own worker pool.
 */
export async function comfyApp(baseUrl: string, workflow: "sdxl" | "img2img") {
  const t = await makeTestApp({
    models: [
      {
        id: `c/${workflow}`,
        kind: "image",
        provider: "comfy",
        upstream_model: workflow,
        price_usd_micro: 1000,
        max: 1,
        input_schema: workflow === "sdxl" ? SDXL_SCHEMA : IMG2IMG_SCHEMA,
      },
    ],
    providers: { comfy: { type: "comfyui", base_url: baseUrl, workflows: { sdxl: SDXL, img2img: IMG2IMG } } },
  });
  await t.ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
  t.ctx.providers.set("comfy", createComfyProvider("comfy", settings(baseUrl)));
  return t;
}
