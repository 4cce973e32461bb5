import { png } from "../media-fixtures.ts";

/**
 * A stand-in cog server that behaves as cog's own (github.com/replicate/cog, the Rust server
 * "coglet", read at crates/coglet/src/transport/http/routes.rs, service.rs, prediction.rs and
 * webhook.rs, 2026-08):
 * - `PUT /predictions/{id}` (routes.rs `create_prediction_idempotent`): a body `id` other than the
 *   path's is 422; an id that is running answers 202 with its current state (no second run); else
 *   the prediction is created as `POST /predictions` does (`create_prediction_with_id`): input
 *   validation 422 `{detail: [...]}`, all slots busy 409 `{"error": "At capacity - all prediction
 *   slots busy", "status": "failed"}` (`CreatePredictionError::AtCapacity`), `Prefer: respond-async`
 *   202 `{id, status: "starting"}`, else it answers when done (200).
 * - no GET of a prediction; `POST /predictions/{id}/cancel` 200 `{}` when running, 404 `{}` when not
 *   (`cancel_prediction`); `GET /health-check` READY, or BUSY when every slot runs (`health_check`,
 *   `HealthCheckResponse::from_snapshot`), or what a test sets (`health`: STARTING, SETUP_FAILED...).
 * - a prediction is forgotten as it ends (`remove_prediction` right after `predict`), so a PUT of a
 *   finished id starts it again: `started()` counts every start.
 * - webhooks (webhook.rs): `webhook_events_filter` (default start, output, logs, completed); `start`
 *   is sent once, fire and forget; the final one (`send_terminal`, spawned after the prediction is
 *   forgotten) is retried on a connection error, 429 and 5xx, 12 times at most, after
 *   backoff_base * 2^min(attempt, 10) (cog: 100 ms; here `backoffMs`), and not on another status.
 *   The payload is the prediction (`build_state_snapshot`): id, status, logs, output, error, metrics
 *   (predict_time once final).
 * Outputs are `data:` URLs (cog without an upload URL): one PNG by default, or `input.mock_output`.
 * `input.prompt` is required (a string); `input.fail` makes the prediction fail with that error.
 */
export interface StandInCog {
  url: string;
  port: number;
  /** Ids of the predictions started, in order (a second start of one id is a second entry). */
  started(): string[];
  cancels(): string[];
  /** Final webhook attempts and how each went ("ok", a status, or "error" for no connection). */
  finalAttempts(): { id: string; outcome: string }[];
  /** Events delivered (2xx) per prediction id. */
  delivered(id: string): string[];
  running(): string[];
  /** PUT and POST creates received, whatever they answered. */
  creates(): number;
  /** What GET /health-check answers instead of READY/BUSY (null: the truth). */
  health: string | null;
  /** Predictions started from now on wait for release(). */
  hold(): void;
  release(): void;
  /** Creates a prediction directly (another client of the same server). */
  occupy(id: string): Promise<number>;
  stop(): void;
}

interface Running {
  id: string;
  input: Record<string, unknown>;
  status: "starting" | "processing" | "succeeded" | "failed" | "canceled";
  output?: unknown;
  error?: string;
  logs: string;
  startedAt: number;
  webhook: string | null;
  events: Set<string>;
  finish: () => void;
}

export function startStandInCog(
  o: {
    slots?: number;
    runMs?: number;
    backoffMs?: number;
    maxRetries?: number;
    webhookOrigin?: () => string;
    port?: number;
  } = {},
): StandInCog {
  const slots = o.slots ?? 1;
  const runMs = o.runMs ?? 30;
  const backoffMs = o.backoffMs ?? 100;
  const maxRetries = o.maxRetries ?? 12;
  const running = new Map<string, Running>();
  const started: string[] = [];
  const cancels: string[] = [];
  const finalAttempts: { id: string; outcome: string }[] = [];
  const delivered = new Map<string, string[]>();
  let held = false;
  const waiting: (() => void)[] = [];
  let stopped = false;
  let creates = 0;

  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

  const snapshot = (p: Running) => ({
    id: p.id,
    status: p.status,
    logs: p.logs,
    ...(p.output !== undefined ? { output: p.output } : {}),
    ...(p.error !== undefined ? { error: p.error } : {}),
    metrics:
      p.status === "succeeded" || p.status === "failed" || p.status === "canceled"
        ? { predict_time: (Date.now() - p.startedAt) / 1000 }
        : {},
  });

  const target = (url: string) => {
    if (!o.webhookOrigin) return url;
    const u = new URL(url);
    return `${o.webhookOrigin()}${u.pathname}${u.search}`;
  };

  async function post(url: string, payload: unknown): Promise<string> {
    try {
      const res = await fetch(target(url), {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "coglet/stand-in" },
        body: JSON.stringify(payload),
      });
      await res.body?.cancel();
      return res.ok ? "ok" : String(res.status);
    } catch {
      return "error";
    }
  }

  /** webhook.rs `send_terminal`: retried on no connection, 429 and 5xx. */
  async function sendFinal(p: Running): Promise<void> {
    if (!p.webhook || !p.events.has("completed")) return;
    const payload = snapshot(p);
    for (let attempt = 0; ; ) {
      if (stopped) return;
      const outcome = await post(p.webhook, payload);
      finalAttempts.push({ id: p.id, outcome });
      if (outcome === "ok") {
        delivered.set(p.id, [...(delivered.get(p.id) ?? []), "completed"]);
        return;
      }
      if (outcome !== "error" && !["429", "500", "502", "503", "504"].includes(outcome)) return;
      attempt++;
      if (attempt > maxRetries) return;
      await Bun.sleep(backoffMs * 2 ** Math.min(attempt, 10));
    }
  }

  function end(p: Running, status: "succeeded" | "failed" | "canceled") {
    if (p.status === "succeeded" || p.status === "failed" || p.status === "canceled") return;
    p.status = status;
    if (status === "succeeded") {
      const mock = p.input.mock_output;
      p.output =
        mock !== undefined ? mock : `data:image/png;base64,${Buffer.from(png(16, 16)).toString("base64")}`;
      p.logs += "done\n";
    } else if (status === "failed") {
      p.error = String(p.input.fail);
    }
    running.delete(p.id); // service.rs remove_prediction: forgotten as it ends
    void sendFinal(p); // prediction.rs fire_terminal_webhook: spawned, not awaited
    p.finish();
  }

  function start(id: string, input: Record<string, unknown>, webhook: string | null, filter: unknown) {
    let finish = () => {};
    const done = new Promise<void>((r) => {
      finish = r;
    });
    const events = new Set(
      Array.isArray(filter) ? (filter as string[]) : ["start", "output", "logs", "completed"],
    );
    const p: Running = {
      id,
      input,
      status: "starting",
      logs: "",
      startedAt: Date.now(),
      webhook,
      events,
      finish,
    };
    running.set(id, p);
    started.push(id);
    void (async () => {
      if (held) await new Promise<void>((r) => waiting.push(r));
      if (p.status !== "starting") return; // canceled while held
      p.status = "processing";
      p.logs += "predicting\n";
      if (webhook && events.has("start")) {
        void post(webhook, snapshot(p)).then((r) => {
          if (r === "ok") delivered.set(id, [...(delivered.get(id) ?? []), "start"]);
        });
      }
      await Bun.sleep(runMs);
      if (p.status !== "processing") return;
      end(p, p.input.fail !== undefined ? "failed" : "succeeded");
    })();
    return { p, done };
  }

  async function create(req: Request, id: string | null): Promise<Response> {
    creates++;
    const body = (await req.json().catch(() => ({}))) as {
      id?: string;
      input?: Record<string, unknown>;
      webhook?: string;
      webhook_events_filter?: unknown;
    };
    if (id !== null && body.id !== undefined && body.id !== id) {
      return json(
        {
          detail: [
            {
              loc: ["body", "id"],
              msg: "prediction ID must match the ID supplied in the URL",
              type: "value_error",
            },
          ],
        },
        422,
      );
    }
    const pid = id ?? body.id ?? `pred_${Date.now().toString(16)}`;
    const existing = running.get(pid);
    if (id !== null && existing) return json({ ...snapshot(existing), input: existing.input }, 202);
    const input = body.input ?? {};
    if (typeof input.prompt !== "string") {
      return json(
        { detail: [{ loc: ["body", "input", "prompt"], msg: "Field required", type: "missing" }] },
        422,
      );
    }
    if (running.size >= slots) {
      return json({ error: "At capacity - all prediction slots busy", status: "failed" }, 409);
    }
    const { p, done } = start(pid, input, body.webhook ?? null, body.webhook_events_filter);
    if (req.headers.get("prefer") === "respond-async") return json({ id: pid, status: "starting" }, 202);
    await done;
    return json(snapshot(p));
  }

  const server = Bun.serve({
    port: o.port ?? 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === "GET" && path === "/health-check")
        return json({
          status: self.health ?? (running.size >= slots ? "BUSY" : "READY"),
          version: { coglet: "stand-in" },
        });
      if (req.method === "POST" && path === "/predictions") return await create(req, null);
      const put = /^\/predictions\/([^/]+)$/.exec(path);
      if (put && req.method === "PUT") return await create(req, decodeURIComponent(put[1]!));
      const cancel = /^\/predictions\/([^/]+)\/cancel$/.exec(path);
      if (cancel && req.method === "POST") {
        const id = decodeURIComponent(cancel[1]!);
        cancels.push(id);
        const p = running.get(id);
        if (!p) return json({}, 404);
        end(p, "canceled");
        return json({});
      }
      return json({ detail: "Not Found" }, put ? 405 : 404);
    },
  });

  const self: StandInCog = {
    url: `http://127.0.0.1:${server.port}`,
    creates: () => creates,
    health: null,
    port: server.port!,
    started: () => [...started],
    cancels: () => [...cancels],
    finalAttempts: () => [...finalAttempts],
    delivered: (id) => [...(delivered.get(id) ?? [])],
    running: () => [...running.keys()],
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const w of waiting.splice(0)) w();
    },
    occupy: async (id) =>
      (
        await fetch(`http://127.0.0.1:${server.port}/predictions/${id}`, {
          method: "PUT",
          headers: { "content-type": "application/json", prefer: "respond-async" },
          body: JSON.stringify({ input: { prompt: "other client" } }),
        })
      ).status,
    stop: () => {
      stopped = true;
      server.stop(true);
    },
  };
  return self;
}
