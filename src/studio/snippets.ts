/**
 * The studio's "Code": the same call as the form describes, for an API caller, as curl, JavaScript
 * (`@fal-ai/client` for media models, `openai` for text models) and Python (`fal-client` / `openai`),
 * then one tab per other client that has a door onto the same model (`more`: Replicate's client for
 * media models and OpenAI's client on its images, speech and videos calls, Anthropic's SDKs and
 * the Vercel AI SDK for text models).
 * Built from the actual input and the server's public URL, pointed at gengate the way
 * docs/clients.md shows; the key is a placeholder (KEY_PLACEHOLDER) the reader replaces with one of
 * their keys (a console session is never an API key).
 */
import type { Model } from "../catalog/model.ts";

/** What stands for the API key in every snippet. */
export const KEY_PLACEHOLDER = "YOUR_GENGATE_KEY";

export interface Snippets {
  curl: string;
  javascript: string;
  python: string;
  /** The other clients' tabs, in the order shown. */
  more: Snippet[];
}

/** One more client's tab: `id` names its element, `title` the client. */
export interface Snippet {
  id: string;
  title: string;
  language: "javascript" | "python";
  text: string;
}

/** The message a text model's snippets send (the studio's chat has its own). */
const CHAT_EXAMPLE = "Hello!";

const json = (v: unknown, indent = 2) => JSON.stringify(v, null, indent);

/** A POSIX shell single-quoted string ('it'\''s'). */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** JSON text as a Python literal: JSON's true/false/null spelled the Python way, outside strings. */
function pythonLiteral(v: unknown, indent = 0): string {
  const pad = " ".repeat(indent + 4);
  const end = " ".repeat(indent);
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return Number.isFinite(v) ? JSON.stringify(v) : "None";
  if (typeof v === "string") return JSON.stringify(v); // JSON string escapes are valid Python
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return `[\n${v.map((x) => pad + pythonLiteral(x, indent + 4)).join(",\n")},\n${end}]`;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([k, x]) => `${pad}${JSON.stringify(k)}: ${pythonLiteral(x, indent + 4)}`).join(",\n")},\n${end}}`;
}

/** `gen.example.com/v1` of `https://gen.example.com`: fal_client's hosts carry no scheme. */
function hostOf(publicUrl: string): string {
  return publicUrl.replace(/^https?:\/\//, "").replace(/\/+$/, "");
}

function mediaSnippets(model: Model, input: Record<string, unknown>, base: string): Snippets {
  const body = json(input);
  const curl = `# Submit the job (202: its request_id, status_url and response_url)
curl -sS -X POST ${shellQuote(`${base}/v1/queue/${model.id}`)} \\
  -H ${shellQuote(`Authorization: Key ${KEY_PLACEHOLDER}`)} \\
  -H 'Content-Type: application/json' \\
  -d ${shellQuote(JSON.stringify(input))}

# Then: curl -sS -H ${shellQuote(`Authorization: Key ${KEY_PLACEHOLDER}`)} ${shellQuote(`${base}/v1/requests/REQUEST_ID`)}
`;
  const javascript = `// npm install @fal-ai/client
import { createFalClient } from "@fal-ai/client";

const BASE = ${JSON.stringify(base)};
const fal = createFalClient({
  credentials: ${JSON.stringify(KEY_PLACEHOLDER)}, // a gengate API key (Keys page)
  requestMiddleware: async (req) => ({
    ...req,
    url: req.url
      .replace("https://queue.fal.run/", \`\${BASE}/v1/queue/\`)
      .replace("https://fal.run/", \`\${BASE}/v1/run/\`)
      .replace("https://rest.fal.ai/", \`\${BASE}/v1/\`),
  }),
});

const { data, requestId } = await fal.subscribe(${JSON.stringify(model.id)}, {
  input: ${body.replaceAll("\n", "\n  ")},
  logs: true,
  onQueueUpdate: (update) => console.log(update.status),
});
console.log(requestId, JSON.stringify(data, null, 2));
`;
  const host = hostOf(base);
  const python = `# pip install fal-client  (it speaks https only: put gengate behind TLS)
import os

os.environ["FAL_KEY"] = ${JSON.stringify(KEY_PLACEHOLDER)}  # a gengate API key (Keys page)
os.environ["FAL_RUN_HOST"] = ${JSON.stringify(`${host}/v1/run`)}
os.environ["FAL_QUEUE_RUN_HOST"] = ${JSON.stringify(`${host}/v1/queue`)}

import fal_client  # reads the hosts above when imported

result = fal_client.subscribe(
    ${JSON.stringify(model.id)},
    arguments=${pythonLiteral(input, 4)},
    with_logs=True,
    on_queue_update=print,
)
print(result)
`;
  const openai = openAIMediaSnippet(model, input, base);
  return {
    curl,
    javascript,
    python,
    more: [replicateSnippet(model, input, base), ...(openai ? [openai] : [])],
  };
}

/**
 * OpenAI's JavaScript client on the OpenAI-shaped media doors (docs/clients.md): an image model with
 * a prompt through images.generate (n and size from the form), an audio model with a text through
 * audio.speech.create, a video model with a prompt through videos.create and its content. Models
 * whose form has no prompt or text (an upscaler) have no such call.
 */
function openAIMediaSnippet(model: Model, input: Record<string, unknown>, base: string): Snippet | null {
  const head = `// npm install openai
import { writeFile } from "node:fs/promises";
import OpenAI from "openai";

const client = new OpenAI({
  apiKey: ${JSON.stringify(KEY_PLACEHOLDER)}, // a gengate API key (Keys page)
  baseURL: ${JSON.stringify(`${base}/v1`)},
});
`;
  const id = JSON.stringify(model.id);
  let call: string;
  if (model.kind === "image" && typeof input.prompt === "string") {
    const size =
      typeof input.width === "number" && typeof input.height === "number"
        ? `${input.width}x${input.height}`
        : null;
    const n = typeof input.num_images === "number" ? input.num_images : null;
    call = `
const image = await client.images.generate({
  model: ${id},
  prompt: ${JSON.stringify(input.prompt)},${n !== null ? `\n  n: ${n},` : ""}${size !== null ? `\n  size: ${JSON.stringify(size)},` : ""}
  response_format: "url",
});
for (const item of image.data ?? []) console.log(item.url);
`;
  } else if (model.kind === "audio" && typeof input.text === "string") {
    call = `
const audio = await client.audio.speech.create({
  model: ${id},
  input: ${JSON.stringify(input.text)},
  voice: "alloy",
  response_format: "wav",
});
await writeFile("speech.wav", Buffer.from(await audio.arrayBuffer()));
console.log("speech.wav");
`;
  } else if (model.kind === "video" && typeof input.prompt === "string") {
    const seconds = typeof input.duration === "number" ? String(input.duration) : null;
    call = `
let video = await client.videos.create({
  model: ${id},
  prompt: ${JSON.stringify(input.prompt)},${seconds !== null ? `\n  seconds: ${JSON.stringify(seconds)},` : ""}
});
while (video.status === "queued" || video.status === "in_progress") {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  video = await client.videos.retrieve(video.id);
}
if (video.status !== "completed") throw new Error(video.error?.message ?? video.status);
const content = await client.videos.downloadContent(video.id);
await writeFile("video.webm", Buffer.from(await content.arrayBuffer()));
console.log(video.id, "video.webm");
`;
  } else return null;
  return { id: "openai-media", title: "JavaScript (openai)", language: "javascript", text: head + call };
}

/**
 * Replicate's JavaScript client: `run` posts to /models/{owner}/{name}/predictions with `Prefer:
 * wait` and polls until the prediction ends (replicate-javascript index.js `run`); catalog ids are
 * owner/name already. `useFileOutput: false` prints the output links rather than FileOutput streams.
 */
function replicateSnippet(model: Model, input: Record<string, unknown>, base: string): Snippet {
  const text = `// npm install replicate
import Replicate from "replicate";

const replicate = new Replicate({
  auth: ${JSON.stringify(KEY_PLACEHOLDER)}, // a gengate API key (Keys page)
  baseUrl: ${JSON.stringify(`${base}/v1`)},
  useFileOutput: false,
});

const output = await replicate.run(${JSON.stringify(model.id)}, {
  input: ${json(input).replaceAll("\n", "\n  ")},
});
console.log(output);
`;
  return { id: "replicate", title: "JavaScript (replicate)", language: "javascript", text };
}

/** A chat message as the snippets send it. */
interface ChatMessage {
  role: string;
  content: string;
}

/**
 * The chat call a text model's snippets make: the studio chat's own body when it has one (its system
 * prompt, conversation, typed message, temperature and max_tokens), else one example message.
 */
export interface ChatSnippetBody {
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
}

/** The chat body of `input` (what chatBodyOfForm makes; only string contents), or the example. */
function chatBodyOf(input: Record<string, unknown>): ChatSnippetBody {
  const raw = Array.isArray(input.messages) ? input.messages : [];
  const messages = raw.filter(
    (m): m is ChatMessage =>
      typeof m === "object" && m !== null && typeof m.role === "string" && typeof m.content === "string",
  );
  const body: ChatSnippetBody = {
    messages: messages.length ? messages : [{ role: "user", content: CHAT_EXAMPLE }],
  };
  if (typeof input.temperature === "number") body.temperature = input.temperature;
  if (typeof input.max_tokens === "number") body.max_tokens = input.max_tokens;
  return body;
}

/** `key: value,` lines for the optional parameters, in a client's spelling (JS or Python). */
function optionLines(
  pairs: [string, number | string | undefined][],
  indent: string,
  python: boolean,
): string {
  return pairs
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${indent}${k}${python ? "=" : ": "}${JSON.stringify(v)},\n`)
    .join("");
}

/**
 * The other text clients: Anthropic's SDKs append /v1/messages to their base URL (so it is the
 * server's root), and the AI SDK's default `openai(id)` model speaks OpenAI's Responses API. Both
 * take the system prompt apart from the messages.
 */
function moreTextSnippets(model: Model, base: string, body: ChatSnippetBody): Snippet[] {
  const system = body.messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => m.content)
    .join("\n\n");
  const turns = body.messages.filter((m) => m.role === "user" || m.role === "assistant");
  const apart: [string, number | string | undefined][] = [
    ["system", system || undefined],
    ["temperature", body.temperature],
  ];
  const anthropicJs = `// npm install @anthropic-ai/sdk
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({
  apiKey: ${JSON.stringify(KEY_PLACEHOLDER)}, // a gengate API key (Keys page)
  baseURL: ${JSON.stringify(base)},
});

const message = await client.messages.create({
  model: ${JSON.stringify(model.id)},
  max_tokens: ${body.max_tokens ?? 1024},
${optionLines(apart, "  ", false)}  messages: ${json(turns).replaceAll("\n", "\n  ")},
});
for (const block of message.content) if (block.type === "text") console.log(block.text);
`;
  const anthropicPy = `# pip install anthropic
import anthropic

client = anthropic.Anthropic(
    api_key=${JSON.stringify(KEY_PLACEHOLDER)},  # a gengate API key (Keys page)
    base_url=${JSON.stringify(base)},
)

message = client.messages.create(
    model=${JSON.stringify(model.id)},
    max_tokens=${body.max_tokens ?? 1024},
${optionLines(apart, "    ", true)}    messages=${pythonLiteral(turns, 4)},
)
for block in message.content:
    if block.type == "text":
        print(block.text)
`;
  const aiSdk = `// npm install ai @ai-sdk/openai
import { createOpenAI } from "@ai-sdk/openai";
import { generateText } from "ai";

const openai = createOpenAI({
  apiKey: ${JSON.stringify(KEY_PLACEHOLDER)}, // a gengate API key (Keys page)
  baseURL: ${JSON.stringify(`${base}/v1`)},
});

const { text, usage } = await generateText({
  model: openai(${JSON.stringify(model.id)}), // OpenAI's Responses API
${optionLines(apart, "  ", false)}  messages: ${json(turns).replaceAll("\n", "\n  ")},
});
console.log(text, usage);
`;
  return [
    {
      id: "anthropic-js",
      title: "JavaScript (@anthropic-ai/sdk)",
      language: "javascript",
      text: anthropicJs,
    },
    { id: "anthropic-py", title: "Python (anthropic)", language: "python", text: anthropicPy },
    { id: "ai-sdk", title: "JavaScript (ai, @ai-sdk/openai)", language: "javascript", text: aiSdk },
  ];
}

function textSnippets(model: Model, base: string, body: ChatSnippetBody): Snippets {
  const request = { model: model.id, ...body };
  const options: [string, number | undefined][] = [
    ["temperature", body.temperature],
    ["max_tokens", body.max_tokens],
  ];
  const curl = `curl -sS ${shellQuote(`${base}/v1/chat/completions`)} \\
  -H ${shellQuote(`Authorization: Bearer ${KEY_PLACEHOLDER}`)} \\
  -H 'Content-Type: application/json' \\
  -d ${shellQuote(JSON.stringify(request))}
`;
  const javascript = `// npm install openai
import OpenAI from "openai";

const client = new OpenAI({
  apiKey: ${JSON.stringify(KEY_PLACEHOLDER)}, // a gengate API key (Keys page)
  baseURL: ${JSON.stringify(`${base}/v1`)},
});

const stream = await client.chat.completions.create({
  model: ${JSON.stringify(model.id)},
  messages: ${json(body.messages).replaceAll("\n", "\n  ")},
${optionLines(options, "  ", false)}  stream: true,
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? "");
process.stdout.write("\\n");
`;
  const python = `# pip install openai
from openai import OpenAI

client = OpenAI(
    api_key=${JSON.stringify(KEY_PLACEHOLDER)},  # a gengate API key (Keys page)
    base_url=${JSON.stringify(`${base}/v1`)},
)

stream = client.chat.completions.create(
    model=${JSON.stringify(model.id)},
    messages=${pythonLiteral(body.messages, 4)},
${optionLines(options, "    ", true)}    stream=True,
)
for chunk in stream:
    if chunk.choices:
        print(chunk.choices[0].delta.content or "", end="", flush=True)
print()
`;
  return { curl, javascript, python, more: moreTextSnippets(model, base, body) };
}

/** The three snippets for a model and its (typed) input, against `publicUrl`. */
export function studioSnippets(model: Model, input: Record<string, unknown>, publicUrl: string): Snippets {
  const base = publicUrl.replace(/\/+$/, "");
  return model.kind === "text"
    ? textSnippets(model, base, chatBodyOf(input))
    : mediaSnippets(model, input, base);
}
