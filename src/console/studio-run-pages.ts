/**
 * Studio runs (issue 17): `POST /console/studio/run` opens a run of a media model for the signed-in
 * person on the account's balance (src/studio/service.ts `studioRun`: the API's one path, source
 * STUDIO, no key), then 303 to the run's page. `GET /console/studio/runs/<id>` shows the run: status,
 * queue position and logs while it is open (kept live by the status stream
 * `GET /console/studio/runs/<id>/events`, the API's own SSE events, followed by client/app.js's
 * `data-run-events`), then the result in place: images, video and audio players with fresh signed
 * links, download links; a failure shows the error and that nothing was charged. Every lookup is
 * scoped to the session's account: another account's run is 404.
 */
import { Elysia } from "elysia";
import { errorHeaders, httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { statusStream } from "../queue/status-stream.ts";
import { parseStudioForm, readStudioForm } from "../studio/form.ts";
import { studioRunDetail } from "../studio/run-detail.ts";
import { studioFormUploads, studioRun, studioRunOf } from "../studio/service.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
} from "./kit.ts";
import { runBody } from "./studio-run-view.ts";
import { codeSection, studioPage } from "./studio-view.ts";

/** At most this much JSON is read from the `input` field (the API's own limits apply after). */
const MAX_INPUT_CHARS = 256 * 1024;

/**
 * The run form's input: the model's fields as P's parseStudioForm returns them once it lands;
 * until then (and for scripts) a JSON object in the text field `input` (empty: no fields).
 */
function inputOf(c: ActionContext): unknown {
  const text = field(c.form, "input").trim();
  if (text === "") return {};
  if (text.length > MAX_INPUT_CHARS)
    throw new DomainError("validation_error", "The input is too long.", { param: "input" });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new DomainError("validation_error", "The input must be a JSON object of the model's fields.", {
      param: "input",
    });
  }
}

async function startRun(c: ActionContext, kit: ConsoleKit): Promise<SafeHtml | Response> {
  const s = requireAccount(c.session);
  const modelId = field(c.form, "model_id").trim();
  if (!modelId) throw new DomainError("validation_error", "Choose a model.", { param: "model_id" });
  let input: unknown;
  if (field(c.form, "input").trim() !== "") {
    // A JSON object of the model's fields (scripts, and the studio's own tests).
    input = inputOf(c);
  } else {
    // The studio page's form: its fields read and checked by the API's own schema; errors go
    // back next to their fields (400), with what was typed kept.
    const model = kit.ctx.catalog.get(modelId);
    if (!model)
      throw new DomainError("unknown_model", `Model "${modelId.slice(0, 200)}" is not in the catalog.`, {
        param: "model_id",
      });
    // Files chosen without the script come in the form's body: stored first, their ids in their fields.
    const refused = await studioFormUploads(kit.ctx, s.accountId, model, c.form);
    const read = readStudioForm(model, c.form);
    const parsed = await parseStudioForm(model, c.form);
    if (!parsed.ok || Object.keys(refused).length > 0)
      return htmlResponse(
        await studioPage(kit, c, s, model, {
          values: parsed.input,
          raw: read.raw,
          errors: { ...(parsed.ok ? {} : parsed.errors), ...refused },
        }),
        400,
      );
    input = parsed.input;
  }
  try {
    const job = await studioRun(kit.ctx, s, modelId, input);
    return redirect(`/console/studio/runs/${job.id}`);
  } catch (err) {
    // A refused run (402, a field the API rejects, a limit) keeps the person on the studio with
    // everything typed and the reason inline; only a server fault becomes an error page.
    const model = kit.ctx.catalog.get(modelId);
    if (!model || !(err instanceof DomainError) || httpStatus(err.code) >= 500) throw err;
    const values = input && typeof input === "object" && !Array.isArray(input) ? input : {};
    const page = await studioPage(kit, c, s, model, {
      values: values as Record<string, unknown>,
      raw: field(c.form, "input").trim() === "" ? readStudioForm(model, c.form).raw : {},
      refusal: err,
    });
    return htmlResponse(page, httpStatus(err.code), errorHeaders(err));
  }
}

async function runPage(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const { detail, ahead } = await studioRunDetail(kit.ctx, s.accountId, c.params.id ?? "");
  const model = kit.ctx.catalog.get(detail.model_id) ?? null;
  const input = detail.input && typeof detail.input === "object" && !Array.isArray(detail.input);
  // The snippets are this run's own input, not the form's defaults.
  const code =
    model && model.kind !== "text" && input
      ? codeSection(kit, model, detail.input as Record<string, unknown>)
      : null;
  return c.layout({
    title: "Studio run",
    active: "studio",
    body: html`${runBody(kit, detail, model, ahead)}${code}`,
  });
}

async function runEvents(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const job = await studioRunOf(kit.ctx, s.accountId, c.params.id ?? "");
  return statusStream(kit.ctx, job.id, true, AbortSignal.any([c.request.signal, kit.ctx.shutdownSignal]));
}

export function studioRunPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      "/console/studio/run",
      kit.action((c) => startRun(c, kit)),
    )
    .get(
      "/console/studio/runs/:id",
      kit.page((c) => runPage(c, kit)),
    )
    .get(
      "/console/studio/runs/:id/events",
      kit.page((c) => runEvents(c, kit)),
    );
}
