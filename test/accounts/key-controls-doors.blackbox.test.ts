/**
 * A key's allowed_models holds on every door (docs/clients.md "Key controls"): each client library
 * a user has, pointed at gengate with a key limited to other models, raises its own 403 error with
 * gengate's model_not_allowed inside, and nothing is opened or held. The same calls with a key that
 * may use the model pass (so a door that refuses everything would fail here too).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import Replicate from "replicate";
import { startFunded } from "../helpers/api.ts";
import { falClientFor } from "../helpers/fal.ts";

let s: Awaited<ReturnType<typeof startFunded>>;
let limited: string;
let allowed: string;

async function newKey(allowed_models: string[]): Promise<string> {
  const res = await s.post("/v1/keys", { name: "limited", allowed_models });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

beforeAll(async () => {
  s = await startFunded();
  limited = await newKey(["other/*", "sandbox/imagex"]);
  allowed = await newKey(["sandbox/*"]);
});
afterAll(() => s.cleanup());

/** Every door's call for a key: OpenAI's, Anthropic's, Replicate's and fal's clients, and plain HTTP for the estimate. */
function doors(key: string): Record<string, () => Promise<unknown>> {
  const openai = new OpenAI({ apiKey: key, baseURL: `${s.url}/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: key, baseURL: s.url, maxRetries: 0 });
  const replicate = new Replicate({ auth: key, baseUrl: `${s.url}/v1` });
  const fal = falClientFor(s.url, key);
  const image = { prompt: "a fox", width: 64, height: 64 };
  const messages = [{ role: "user" as const, content: "Hi" }];
  const httpOk = async (path: string, body: unknown) => {
    const res = await s.post(path, body, { key });
    if (res.status >= 400) throw Object.assign(new Error(await res.text()), { status: res.status });
    return await res.json();
  };
  return {
    "fal queue.submit": () => fal.queue.submit("sandbox/image", { input: image }),
    "fal run": () => fal.run("sandbox/image", { input: image }),
    "fal stream": async () => {
      const stream = await fal.stream("sandbox/image", { input: image });
      return await stream.done();
    },
    "POST /v1/estimate": () => httpOk("/v1/estimate", { model_id: "sandbox/image", input: image }),
    "openai chat.completions": () =>
      openai.chat.completions.create({ model: "sandbox/chat", messages, max_tokens: 5 }),
    "openai responses": () =>
      openai.responses.create({ model: "sandbox/chat", input: "Hi", max_output_tokens: 5 }),
    "anthropic messages": () => anthropic.messages.create({ model: "sandbox/chat", max_tokens: 5, messages }),
    "anthropic count_tokens": () => anthropic.messages.countTokens({ model: "sandbox/chat", messages }),
    "openai images.generate": () =>
      openai.images.generate({ model: "sandbox/image", prompt: "a fox", size: "64x64" as "256x256" }),
    "openai audio.speech": () =>
      openai.audio.speech.create({
        model: "sandbox/speech",
        input: "hi",
        voice: "alloy",
        response_format: "wav",
      }),
    "openai videos.create": () =>
      openai.videos.create({ model: "sandbox/video" as "sora-2", prompt: "a fox", seconds: "4" as "4" }),
    "replicate predictions (model)": () =>
      replicate.predictions.create({ model: "sandbox/image", input: image }),
    "replicate predictions (version)": () =>
      replicate.predictions.create({ version: "sandbox/image", input: image }),
  };
}

/** The status and body text of what a client raised. */
async function refusal(call: () => Promise<unknown>): Promise<{ status: number; text: string }> {
  try {
    await call();
  } catch (e) {
    const err = e as { status?: number; response?: Response; message: string; body?: unknown };
    const status = err.status ?? err.response?.status ?? 0;
    return { status, text: `${err.message} ${JSON.stringify(err.body ?? null)}` };
  }
  throw new Error("the call was not refused");
}

describe("allowed_models on every door", () => {
  test("a key limited to other models is refused with 403 model_not_allowed by every client", async () => {
    const before = await (await s.get("/v1/account")).json();
    for (const [door, call] of Object.entries(doors(limited))) {
      const r = await refusal(call);
      expect({ door, status: r.status }).toEqual({ door, status: 403 });
      expect({
        door,
        model_not_allowed: r.text.includes("model_not_allowed") || r.text.includes("allowed_models"),
      }).toEqual({
        door,
        model_not_allowed: true,
      });
    }
    // Nothing was opened or held by any refusal.
    expect(await (await s.get("/v1/account")).json()).toMatchObject({
      balance_micro: (before as { balance_micro: string }).balance_micro,
      held_micro: "0",
    });
    const jobs = (await (await s.get("/v1/requests")).json()) as { data: unknown[] };
    expect(jobs.data).toHaveLength(0);
  }, 60_000);

  test("the same calls with a key allowed sandbox/* are not refused for the model", async () => {
    for (const [door, call] of Object.entries(doors(allowed))) {
      let status = 200;
      try {
        await call();
      } catch (e) {
        status =
          (e as { status?: number; response?: Response }).status ??
          (e as { response?: Response }).response?.status ??
          0;
      }
      expect({ door, status }).toEqual({ door, status: 200 });
    }
  }, 120_000);
});
