import { encodePng } from "../../../src/providers/sandbox/media/index.ts";

/**
 * A mock ComfyUI server for tests, faithful to the shapes of ComfyUI's HTTP API:
 * POST /prompt -> {prompt_id, number, node_errors} (400 {error, node_errors} for an invalid
 * workflow), queued under the client's `prompt_id` when it sends one, as ComfyUI's server.py
 * `post_prompt` does (`prompt_id = str(json_data.get("prompt_id", uuid.uuid4()))`, comfyanonymous/ComfyUI;
 * versions before that minted their own: `ignoresPromptId`); GET /history/{id} -> {} until done, then {id: {status, outputs}}; GET /queue ->
 * {queue_running, queue_pending} with [number, prompt_id, prompt, extra_data, outputs] items;
 * GET /view -> the bytes; POST /upload/image (multipart, field `image`) -> {name, subfolder, type};
 * POST /interrupt; POST /queue {delete: [...]}.
 *
 * A prompt is pending until `runAfter` history polls of it, running until `doneAfter`, then done.
 * `fault` injects one failure mode for the requests that follow.
 */
export type Fault =
  | "slow" // every answer waits `slowMs`
  | "invalid" // POST /prompt -> 400 with node errors
  | "exec-error" // the prompt ends with status "error" and an execution_error message
  | "503" // every endpoint -> 503 with Retry-After: 3
  | "malformed" // /history answers text that is not JSON
  | "lost" // a queued prompt vanishes: in neither the queue nor the history
  | "view-cut" // /view sends the headers and part of the file, then breaks the connection
  | "prompt-hang" // POST /prompt queues the prompt, then never answers (the gateway dies waiting)
  | "418"; // POST /prompt -> 418 with `marker` as its error

export interface MockPrompt {
  id: string;
  number: number;
  prompt: Record<string, { class_type: string; inputs: Record<string, unknown> }>;
  clientId: unknown;
  polls: number;
}

export interface MockComfy {
  url: string;
  /** A TCP port that accepts connections and closes them without answering. */
  dropUrl: string;
  fault: Fault | null;
  /** A test's marker, appended to the error texts of faults invalid, exec-error and 418. */
  marker: string;
  slowMs: number;
  runAfter: number;
  doneAfter: number;
  /** The files the finished prompt lists under outputs["9"].images. */
  outputFiles: { filename: string; subfolder: string; type: string }[];
  /** Files /view serves, by filename. */
  files: Map<string, Uint8Array>;
  png: Uint8Array;
  /** An older ComfyUI: POST /prompt ignores a client's prompt_id and mints its own. */
  ignoresPromptId: boolean;
  prompts: MockPrompt[];
  uploads: { name: string; type: string; overwrite: string | null; bytes: Uint8Array }[];
  interrupts: unknown[];
  deleted: string[];
  /** "METHOD /path" of every request, in order. */
  requests: string[];
  /** A prompt ComfyUI already ran (for resume tests). */
  addDone(id: string): void;
  stop(): void;
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers });

export function startMockComfy(): MockComfy {
  const png = encodePng(8, 6, 7);
  const prompts = new Map<string, MockPrompt>();
  let counter = 0;
  const state: MockComfy = {
    url: "",
    dropUrl: "",
    fault: null,
    marker: "",
    slowMs: 300,
    runAfter: 1,
    doneAfter: 3,
    outputFiles: [{ filename: "gengate_00001_.png", subfolder: "", type: "output" }],
    files: new Map([["gengate_00001_.png", png]]),
    png,
    ignoresPromptId: false,
    prompts: [],
    uploads: [],
    interrupts: [],
    deleted: [],
    requests: [],
    addDone(id) {
      const p: MockPrompt = {
        id,
        number: counter++,
        prompt: {},
        clientId: null,
        polls: Number.POSITIVE_INFINITY,
      };
      prompts.set(id, p);
    },
    stop() {
      server.stop(true);
      dropper.stop(true);
    },
  };
  const phase = (p: MockPrompt) =>
    p.polls < state.runAfter ? "pending" : p.polls < state.doneAfter ? "running" : "done";
  const item = (p: MockPrompt) => [p.number, p.id, p.prompt, { client_id: p.clientId }, ["9"]];

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    development: false,
    // The view-cut stream's error lands here (quietly) instead of in the test output.
    error: () => new Response("Internal Server Error", { status: 500 }),
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      state.requests.push(`${req.method} ${path}`);
      if (state.fault === "slow") await Bun.sleep(state.slowMs);
      if (state.fault === "503") return json({ error: "busy" }, 503, { "retry-after": "3" });

      if (req.method === "POST" && path === "/prompt" && state.fault === "418")
        return json({ error: state.marker }, 418);
      if (req.method === "POST" && path === "/prompt") {
        const body = (await req.json()) as { prompt?: unknown; client_id?: unknown; prompt_id?: unknown };
        const prompt = body.prompt as MockPrompt["prompt"];
        const nodeErrors: Record<string, unknown> = {};
        if (prompt === null || typeof prompt !== "object") {
          return json(
            { error: { type: "invalid_prompt", message: "Prompt is not an object", details: "" } },
            400,
          );
        }
        for (const [id, node] of Object.entries(prompt)) {
          if (typeof node?.class_type !== "string" || typeof node.inputs !== "object") {
            nodeErrors[id] = { errors: [{ message: "Node has no class_type" }], class_type: null };
          } else if (JSON.stringify(node.inputs).includes("{{")) {
            nodeErrors[id] = { errors: [{ message: "Unfilled placeholder" }], class_type: node.class_type };
          }
        }
        if (state.fault === "invalid") {
          nodeErrors["4"] = {
            errors: [
              {
                type: "value_not_in_list",
                message: "Value not in list",
                details: `ckpt_name: 'missing.safetensors' not in ['sd_xl_base_1.0.safetensors']${state.marker}`,
                extra_info: {},
              },
            ],
            dependent_outputs: ["9"],
            class_type: "CheckpointLoaderSimple",
          };
        }
        if (Object.keys(nodeErrors).length > 0) {
          return json(
            {
              error: {
                type: "prompt_outputs_failed_validation",
                message: "Prompt outputs failed validation",
                details: "",
                extra_info: {},
              },
              node_errors: nodeErrors,
            },
            400,
          );
        }
        const id =
          body.prompt_id !== undefined && !state.ignoresPromptId
            ? String(body.prompt_id)
            : crypto.randomUUID();
        const p: MockPrompt = { id, number: counter++, prompt, clientId: body.client_id, polls: 0 };
        state.prompts.push(p);
        if (state.fault !== "lost") prompts.set(id, p);
        if (state.fault === "prompt-hang") await new Promise(() => {}); // until the server stops
        return json({ prompt_id: id, number: p.number, node_errors: {} });
      }

      if (req.method === "GET" && path.startsWith("/history/")) {
        if (state.fault === "malformed") return new Response("<html>Internal error</html>", { status: 200 });
        const id = decodeURIComponent(path.slice("/history/".length));
        const p = prompts.get(id);
        if (!p) return json({});
        const before = phase(p);
        p.polls++;
        if (before !== "done") return json({});
        if (state.fault === "exec-error") {
          return json({
            [id]: {
              prompt: item(p),
              outputs: {},
              status: {
                status_str: "error",
                completed: false,
                messages: [
                  ["execution_start", { prompt_id: id, timestamp: 1 }],
                  [
                    "execution_error",
                    {
                      prompt_id: id,
                      node_id: "3",
                      node_type: "KSampler",
                      exception_message: `CUDA out of memory. Tried to allocate 2.00 GiB${state.marker}`,
                      exception_type: "torch.OutOfMemoryError",
                      traceback: ["..."],
                    },
                  ],
                ],
              },
              meta: {},
            },
          });
        }
        return json({
          [id]: {
            prompt: item(p),
            outputs: { "9": { images: state.outputFiles } },
            status: {
              status_str: "success",
              completed: true,
              messages: [
                ["execution_start", { prompt_id: id, timestamp: 1 }],
                ["execution_success", { prompt_id: id, timestamp: 2 }],
              ],
            },
            meta: { "9": { node_id: "9", display_node: "9" } },
          },
        });
      }

      if (path === "/queue") {
        if (req.method === "POST") {
          const body = (await req.json()) as { delete?: string[] };
          for (const id of body.delete ?? []) {
            state.deleted.push(id);
            prompts.delete(id);
          }
          return new Response(null, { status: 200 });
        }
        const live = [...prompts.values()];
        return json({
          queue_running: live.filter((p) => phase(p) === "running").map(item),
          queue_pending: live.filter((p) => phase(p) === "pending").map(item),
        });
      }

      if (req.method === "GET" && path === "/view") {
        const bytes = state.files.get(url.searchParams.get("filename") ?? "");
        if (!bytes || url.searchParams.get("type") !== "output")
          return new Response("Not found", { status: 404 });
        if (state.fault === "view-cut") {
          const stream = new ReadableStream({
            start(c) {
              c.enqueue(bytes.slice(0, 10));
            },
            async pull(c) {
              await Bun.sleep(20);
              c.error(new Error("connection dropped"));
            },
          });
          return new Response(stream, { headers: { "content-type": "image/png" } });
        }
        return new Response(bytes, { headers: { "content-type": "image/png" } });
      }

      if (req.method === "POST" && path === "/upload/image") {
        const form = await req.formData();
        const file = form.get("image");
        if (!(file instanceof Blob)) return new Response("no image", { status: 400 });
        const name = (file as File).name || "image.png";
        state.uploads.push({
          name,
          type: String(form.get("type") ?? "input"),
          overwrite: form.get("overwrite") as string | null,
          bytes: new Uint8Array(await file.arrayBuffer()),
        });
        return json({ name, subfolder: "", type: "input" });
      }

      if (req.method === "POST" && path === "/interrupt") {
        const text = await req.text();
        state.interrupts.push(text ? JSON.parse(text) : {});
        return new Response(null, { status: 200 });
      }
      return new Response("Not found", { status: 404 });
    },
  });
  state.url = `http://127.0.0.1:${server.port}`;

  const dropper = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket) {
        socket.end();
      },
    },
  });
  state.dropUrl = `http://127.0.0.1:${dropper.port}`;
  return state;
}
