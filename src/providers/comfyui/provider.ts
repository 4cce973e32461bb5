import type { ProviderSettings } from "../../config/schema.ts";
import { sniffImageSize } from "../../lib/image-size.ts";
import { stripTrailingSlashes } from "../../lib/url.ts";
import { CONTENT_TYPES, sleep } from "../common.ts";
import {
  type MediaOutput,
  type Provider,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
  ShutdownError,
} from "../types.ts";
import { type UpstreamCall, upstreamJson } from "../upstream-client.ts";
import { readBounded, send, statusError } from "./client.ts";
import { fillTemplate, isImageField, placeholders } from "./template.ts";

/** Largest image input fetched and uploaded to ComfyUI. */
export const MAX_IMAGE_INPUT_BYTES = 50 * 1024 * 1024;
/** Largest single output file read back from /view. */
export const MAX_OUTPUT_BYTES = 1024 * 1024 * 1024;
/**
 * The recorded upstream id of a prompt whose submit may or may not have reached ComfyUI: the id we
 * chose, not yet confirmed by ComfyUI's answer. A resumed job looks for it and submits again (under
 * the same id) only when ComfyUI does not have it.
 */
const SUBMITTING = "submitting:";
/** Cancelling (queue delete / interrupt) after an abort may take at most this long. */
const CANCEL_TIMEOUT_MS = 2000;

export interface ComfyProviderOptions {
  /**
   * Whether an abort should cancel the prompt on ComfyUI. Default: every abort except the worker
   * pool's shutdown (a ShutdownError reason), whose job is resumed by the next start.
   */
  cancelOnAbort?: (reason: unknown) => boolean;
}

const defaultCancelOnAbort = (reason: unknown) => !(reason instanceof ShutdownError);

interface OutputFile {
  filename: string;
  subfolder: string;
  type: string;
}

type HistoryEntry = { status?: unknown; outputs?: unknown };
type QueueState = "running" | "pending" | "absent";

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
const malformed = (what: string) =>
  new ProviderError("failed", `ComfyUI sent a malformed answer to ${what}.`);
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * Runs jobs on a ComfyUI server: fills the model's workflow template from the input, uploads image
 * inputs, queues the prompt under an id recorded before the submit, polls /history until it
 * finishes and reads every output file back through /view. A job with a recorded prompt id is
 * resumed by polling, never queued twice. See docs/providers/comfyui.md.
 */
export class ComfyProvider implements Provider {
  private readonly base: string;
  private readonly cancelOnAbort: (reason: unknown) => boolean;

  constructor(
    readonly name: string,
    private readonly cfg: ProviderSettings,
    opts: ComfyProviderOptions = {},
  ) {
    this.base = stripTrailingSlashes(cfg.baseUrl);
    this.cancelOnAbort = opts.cancelOnAbort ?? defaultCancelOnAbort;
  }

  resumable(job: { upstreamId: string | null }): boolean {
    return job.upstreamId !== null && job.upstreamId !== "";
  }

  async run(job: ProviderJob): Promise<ProviderResult> {
    const call: UpstreamCall = { timeoutMs: this.cfg.timeoutMs, signal: job.signal, secret: this.cfg.apiKey };
    let promptId: string;
    const recorded = job.upstreamId ?? "";
    if (recorded !== "" && !recorded.startsWith(SUBMITTING)) {
      promptId = recorded;
      job.log(`comfyui: resuming prompt ${promptId}`);
    } else if (recorded !== "" && (await this.known(recorded.slice(SUBMITTING.length), call))) {
      // The submit reached ComfyUI but its answer never reached us (a crash, a dropped connection).
      promptId = recorded.slice(SUBMITTING.length);
      await job.setUpstreamId(promptId);
      job.log(`comfyui: resuming prompt ${promptId} (queued before its answer was lost)`);
    } else {
      promptId = await this.submit(job, recorded.slice(SUBMITTING.length) || crypto.randomUUID(), call);
    }
    try {
      const entry = await this.waitFor(promptId, job, call);
      const outputs = await this.collect(entry, job, call);
      job.log(`comfyui: prompt ${promptId} produced ${outputs.length} file(s)`);
      return { outputs };
    } catch (err) {
      if (job.signal.aborted && this.cancelOnAbort(job.signal.reason)) await this.cancel(promptId, job);
      throw err;
    }
  }

  /**
   * Queues the prompt under an id we choose, recorded on the job (as "submitting:<id>") before the
   * request leaves: whatever happens between the submit and its answer, the next attempt looks for
   * that id instead of queueing the workflow a second time. ComfyUI's POST /prompt takes a client's
   * `prompt_id` (server.py `post_prompt`: `prompt_id = str(json_data.get("prompt_id", uuid.uuid4()))`,
   * comfyanonymous/ComfyUI); an older server that mints its own is followed by its answer.
   */
  private async submit(job: ProviderJob, chosen: string, call: UpstreamCall): Promise<string> {
    const prompt = await this.buildPrompt(job, call);
    await job.setUpstreamId(`${SUBMITTING}${chosen}`);
    let promptId: string;
    try {
      promptId = await this.queuePrompt(prompt, chosen, call);
    } catch (err) {
      // Aborted while submitting (a time limit): it may be queued already, under the chosen id.
      if (job.signal.aborted && this.cancelOnAbort(job.signal.reason)) await this.cancel(chosen, job);
      throw err;
    }
    await job.setUpstreamId(promptId);
    job.log(
      promptId === chosen
        ? `comfyui: queued prompt ${promptId}`
        : `comfyui: queued prompt ${promptId} (this ComfyUI ignores a client's prompt_id)`,
    );
    return promptId;
  }

  /** Whether ComfyUI has the prompt: in its history, running or pending. */
  private async known(promptId: string, call: UpstreamCall): Promise<boolean> {
    if (await this.history(promptId, call)) return true;
    if ((await this.queueState(promptId, call)) !== "absent") return true;
    // It may have finished between the two reads.
    return (await this.history(promptId, call)) !== null;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.cfg.apiKey ? { authorization: `Bearer ${this.cfg.apiKey}`, ...extra } : extra;
  }

  /** The filled workflow, with image URL inputs uploaded to ComfyUI first. */
  private async buildPrompt(job: ProviderJob, call: UpstreamCall): Promise<unknown> {
    const name = job.model.upstream_model ?? "";
    if (!Object.hasOwn(this.cfg.workflows ?? {}, name)) {
      throw new ProviderError("failed", `No workflow "${name}" in providers.${this.name}.workflows.`);
    }
    const template = this.cfg.workflows[name];
    const uploaded: Record<string, string> = {};
    for (const field of placeholders(template)) {
      const v = job.input[field];
      if (isImageField(field) && typeof v === "string" && /^https?:\/\//i.test(v)) {
        uploaded[field] = await this.uploadImage(field, v, job, call);
      }
    }
    return fillTemplate(template, job.input, job.model.input_schema, uploaded);
  }

  private async uploadImage(
    field: string,
    raw: string,
    job: ProviderJob,
    call: UpstreamCall,
  ): Promise<string> {
    // Our own uploads come from the store; any other URL through the outbound policy (SSRF).
    const { bytes } = await job.readInput(raw, {
      what: field,
      maxBytes: MAX_IMAGE_INPUT_BYTES,
      timeoutMs: this.cfg.timeoutMs,
    });
    if (bytes.length === 0) throw new ProviderError("input", `${field}: the image is empty.`);
    const ext = sniffImageSize(bytes)?.format ?? "png";
    const form = new FormData();
    form.append("image", new Blob([bytes as Uint8Array<ArrayBuffer>]), `gengate-${job.id}-${field}.${ext}`);
    form.append("type", "input");
    form.append("overwrite", "true");
    const { body } = await upstreamJson<unknown>(
      `${this.base}/upload/image`,
      { method: "POST", body: form, headers: this.headers() },
      call,
    );
    if (!isObject(body) || typeof body.name !== "string" || body.name === "")
      throw malformed("/upload/image");
    const sub = typeof body.subfolder === "string" ? body.subfolder : "";
    job.log(`comfyui: uploaded ${field} (${bytes.length} bytes) as ${body.name}`);
    return sub ? `${sub}/${body.name}` : body.name;
  }

  private async queuePrompt(prompt: unknown, promptId: string, call: UpstreamCall): Promise<string> {
    const res = await send(
      `${this.base}/prompt`,
      {
        method: "POST",
        headers: this.headers({ "content-type": "application/json" }),
        body: JSON.stringify({ prompt, prompt_id: promptId, client_id: `gengate-${this.name}` }),
      },
      call,
    );
    const text = await res.text().catch(() => "");
    if (res.status === 400) {
      // The node errors name the operator's workflow and ComfyUI's internals: the log's, not the client's.
      throw new ProviderError("input", "ComfyUI refused the workflow.", {
        status: res.status,
        detail: promptErrorSummary(text),
        secret: call.secret ?? null,
      });
    }
    if (res.status >= 300) throw statusError(res, text, "the prompt", call.secret);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw malformed("/prompt");
    }
    if (!isObject(body) || typeof body.prompt_id !== "string" || body.prompt_id === "")
      throw malformed("/prompt");
    return body.prompt_id;
  }

  /** Polls until the prompt is in /history; a prompt that is nowhere (lost) is "failed". */
  private async waitFor(promptId: string, job: ProviderJob, call: UpstreamCall): Promise<HistoryEntry> {
    for (;;) {
      let entry = await this.history(promptId, call);
      if (!entry) {
        const state = await this.queueState(promptId, call);
        if (state === "absent") {
          // It may have finished between the two reads: look once more before calling it lost.
          entry = await this.history(promptId, call);
          if (!entry) {
            throw new ProviderError(
              "failed",
              `ComfyUI lost prompt ${promptId}: it is neither queued, running nor in the history (was ComfyUI restarted?).`,
            );
          }
        }
      }
      if (entry) {
        checkStatus(entry);
        return entry;
      }
      await sleep(this.cfg.pollIntervalMs, job.signal);
    }
  }

  private async history(promptId: string, call: UpstreamCall): Promise<HistoryEntry | null> {
    const { body } = await upstreamJson<unknown>(
      `${this.base}/history/${encodeURIComponent(promptId)}`,
      { headers: this.headers() },
      call,
    );
    if (!isObject(body)) throw malformed("/history");
    const entry = body[promptId];
    if (entry === undefined) return null;
    if (!isObject(entry)) throw malformed("/history");
    return entry;
  }

  private async queueState(promptId: string, call: UpstreamCall): Promise<QueueState> {
    const { body } = await upstreamJson<unknown>(`${this.base}/queue`, { headers: this.headers() }, call);
    if (!isObject(body) || !Array.isArray(body.queue_running) || !Array.isArray(body.queue_pending)) {
      throw malformed("/queue");
    }
    const has = (items: unknown[]) => items.some((it) => Array.isArray(it) && it[1] === promptId);
    if (has(body.queue_running)) return "running";
    if (has(body.queue_pending)) return "pending";
    return "absent";
  }

  /** Best effort, never throws: a pending prompt is deleted from the queue, a running one interrupted. */
  private async cancel(promptId: string, job: ProviderJob): Promise<void> {
    const call: UpstreamCall = {
      timeoutMs: Math.min(this.cfg.timeoutMs, CANCEL_TIMEOUT_MS),
      signal: new AbortController().signal,
    };
    const post = (path: string, body: unknown) =>
      upstreamJson(
        `${this.base}${path}`,
        {
          method: "POST",
          headers: this.headers({ "content-type": "application/json" }),
          body: JSON.stringify(body),
        },
        call,
      );
    try {
      const state = await this.queueState(promptId, call).catch(() => "running" as const);
      if (state === "pending") await post("/queue", { delete: [promptId] });
      // ComfyUI interrupts only this prompt when given its id (older versions: whatever runs).
      else if (state === "running") await post("/interrupt", { prompt_id: promptId });
      if (state !== "absent") job.log(`comfyui: cancelled prompt ${promptId} (${state})`);
    } catch {
      job.log(`comfyui: could not cancel prompt ${promptId}`);
    }
  }

  /** Reads every output file of a finished prompt through /view. */
  private async collect(entry: HistoryEntry, job: ProviderJob, call: UpstreamCall): Promise<MediaOutput[]> {
    const files = outputFiles(entry);
    const kind = mediaKind(job.model.kind);
    const outputs: MediaOutput[] = [];
    for (const f of files) {
      const ext = f.filename.split(".").pop()?.toLowerCase() ?? "";
      const contentType = CONTENT_TYPES[ext];
      if (!contentType) {
        job.log(`comfyui: skipped output ${f.filename} (not a media file type gengate serves)`);
        continue;
      }
      const q = new URLSearchParams({ filename: f.filename, subfolder: f.subfolder, type: f.type });
      const res = await send(`${this.base}/view?${q}`, { headers: this.headers() }, call);
      if (!res.ok) {
        const text = await res.text().catch(() => "");
        throw statusError(res, text, "an output file's download", call.secret);
      }
      const bytes = await readBounded(res, MAX_OUTPUT_BYTES, "An output file", call);
      const out: MediaOutput = { kind, contentType, bytes };
      const size = contentType.startsWith("image/") ? sniffImageSize(bytes) : null;
      if (size) {
        out.width = size.width;
        out.height = size.height;
      }
      outputs.push(out);
    }
    if (outputs.length === 0)
      throw new ProviderError("failed", "The workflow finished without any output file.");
    return outputs;
  }
}

export function createComfyProvider(
  name: string,
  cfg: ProviderSettings,
  opts?: ComfyProviderOptions,
): Provider {
  return new ComfyProvider(name, cfg, opts);
}

function mediaKind(kind: string): MediaOutput["kind"] {
  if (kind === "video" || kind === "avatar") return "video";
  if (kind === "audio") return "audio";
  return "image";
}

/**
 * Throws "failed" for a prompt that ended in error (or was interrupted); malformed -> "failed". The
 * node and its exception (which may repeat the input or a path on the ComfyUI host) are the
 * error's detail, for the operator's log.
 */
function checkStatus(entry: HistoryEntry): void {
  const status = entry.status;
  if (status === undefined) return; // very old ComfyUI: an entry in the history means done
  if (!isObject(status)) throw malformed("/history");
  if (status.status_str !== "error" && status.completed !== false) return;
  const messages = Array.isArray(status.messages) ? status.messages : [];
  for (const m of messages) {
    if (!Array.isArray(m) || !isObject(m[1])) continue;
    const d = m[1];
    const node =
      typeof d.node_id === "string"
        ? ` at node ${d.node_id}${typeof d.node_type === "string" ? ` (${d.node_type})` : ""}`
        : "";
    if (m[0] === "execution_error") {
      const why = typeof d.exception_message === "string" ? `: ${d.exception_message.trim()}` : "";
      throw new ProviderError("failed", "ComfyUI failed the workflow.", { detail: `${node.trim()}${why}` });
    }
    if (m[0] === "execution_interrupted") {
      throw new ProviderError("failed", "ComfyUI interrupted the workflow.", { detail: node.trim() });
    }
  }
  throw new ProviderError("failed", "ComfyUI failed the workflow (no error message).");
}

/** Files of type "output" from every node (images, gifs, audio, ...); "temp" previews only when there are none. */
function outputFiles(entry: HistoryEntry): OutputFile[] {
  const outputs = entry.outputs ?? {};
  if (!isObject(outputs)) throw malformed("/history");
  const all: OutputFile[] = [];
  const ids = Object.keys(outputs).sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  for (const id of ids) {
    const node = outputs[id];
    if (!isObject(node)) throw malformed("/history");
    for (const list of Object.values(node)) {
      if (!Array.isArray(list)) continue;
      for (const f of list) {
        if (isObject(f) && typeof f.filename === "string" && f.filename !== "") {
          all.push({
            filename: f.filename,
            subfolder: typeof f.subfolder === "string" ? f.subfolder : "",
            type: typeof f.type === "string" ? f.type : "output",
          });
        }
      }
    }
  }
  const saved = all.filter((f) => f.type === "output");
  return saved.length > 0 ? saved : all;
}

/** "Prompt outputs failed validation; node 4 (CheckpointLoaderSimple): Value not in list: ..." */
export function promptErrorSummary(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "invalid workflow (400).";
  }
  if (!isObject(body)) return "invalid workflow (400).";
  const parts: string[] = [];
  const e = body.error;
  if (typeof e === "string") parts.push(e);
  else if (isObject(e) && typeof e.message === "string") {
    parts.push(e.message + (typeof e.details === "string" && e.details ? `: ${clip(e.details, 200)}` : ""));
  }
  if (isObject(body.node_errors)) {
    for (const [id, ne] of Object.entries(body.node_errors)) {
      if (!isObject(ne)) continue;
      const cls = typeof ne.class_type === "string" ? ` (${ne.class_type})` : "";
      const errs = Array.isArray(ne.errors) ? ne.errors : [];
      const msgs = errs
        .filter(isObject)
        .map((x) => [x.message, x.details].filter((s) => typeof s === "string" && s !== "").join(": "))
        .filter((s) => s !== "");
      parts.push(`node ${id}${cls}: ${clip(msgs.join("; ") || "invalid", 200)}`);
    }
  }
  return clip(parts.join("; ") || "invalid workflow (400)", 600);
}
