/**
 * The studio page (`/console/studio`, any member of the account): a `Model` select from the live
 * catalog (grouped by kind, price per unit and max), the chosen model's form (src/studio/form.ts),
 * the exact estimate in an element labelled `Estimate` with the available balance beside it, kept
 * up to date by htmx (`POST /console/studio/estimate` answers the estimate box and, out of band, the
 * "Code" section), a `Run` button posting the form to `/console/studio/run` (src/console/
 * studio-run-pages.ts), and "Code": the same call as curl, JavaScript and Python (src/studio/
 * snippets.ts). URL fields take a file: `POST /console/studio/upload` (raw bytes, the file's
 * Content-Type, the session's CSRF token) stores it through the files store's own upload checks
 * (receiveUpload: allowed types, magic bytes, size limit, free disk) as a file of the account, and
 * answers its file_id, which app.js puts in the field; without the script the form goes as multipart
 * with the file, stored the same way when it is run or its estimate updated (studioFormUploads). A
 * text model gets the chat view instead of `Run` (src/console/studio-chat-pages.ts), and every page
 * ends with the person's run history (src/console/studio-history.ts).
 *
 * `?from=<run id>` (`Edit and run again` on a finished run) opens the run's model with the run's own
 * input filled in (files as their file ids or URLs) and its result beside the form; another account's
 * run is a 404 page.
 *
 * Without JavaScript every part still works: the select's `Choose` button, `Update estimate`
 * (the same route, answering the whole page) and `Run`, the file inputs too (multipart, above).
 */
import { Elysia } from "elysia";
import type { Model } from "../catalog/model.ts";
import { fileView } from "../files/store.ts";
import { createAccountUpload } from "../files/uploads.ts";
import { errorResponse } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { AppContext } from "../server/context.ts";
import { readStudioForm } from "../studio/form.ts";
import { studioRunDetail } from "../studio/run-detail.ts";
import { studioFormUploads } from "../studio/service.ts";
import {
  type ActionContext,
  type ConsoleKit,
  type Form,
  field,
  htmlResponse,
  isHtmx,
  type PageContext,
  requireAccount,
} from "./kit.ts";
import { estimateBox } from "./studio-estimate.ts";
import { codeSection, estimateOf, studioPage, unreadEstimate } from "./studio-view.ts";

/** The model the page shows: `?model=`, else the first image model, else the first of the catalog. */
function chosenModel(ctx: Pick<AppContext, "catalog">, id: string | null): Model | null {
  if (id) {
    const m = ctx.catalog.get(id);
    if (!m) throw new DomainError("not_found", `Model "${id.slice(0, 200)}" is not in the catalog.`);
    return m;
  }
  return ctx.catalog.models.find((m) => m.kind === "image") ?? ctx.catalog.models[0] ?? null;
}

/** The model a posted form names (`model_id`), or a 400 page. */
function postedModel(kit: ConsoleKit, form: Form): Model {
  const id = field(form, "model_id");
  const model = id ? kit.ctx.catalog.get(id) : undefined;
  if (!model) {
    throw new DomainError("validation_error", `Model "${id.slice(0, 200)}" is not in the catalog.`, {
      param: "model_id",
    });
  }
  return model;
}

async function showStudio(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const from = c.url.searchParams.get("from");
  if (from) {
    // `Edit and run again`: the run's model with the run's own input (the account's runs only).
    const { detail } = await studioRunDetail(kit.ctx, s.accountId, from);
    const values = detail.input && typeof detail.input === "object" && !Array.isArray(detail.input);
    return await studioPage(kit, c, s, chosenModel(kit.ctx, detail.model_id), {
      values: values ? (detail.input as Record<string, unknown>) : {},
      from: detail,
    });
  }
  return await studioPage(kit, c, s, chosenModel(kit.ctx, c.url.searchParams.get("model")));
}

async function updateEstimate(c: ActionContext, kit: ConsoleKit): Promise<SafeHtml | Response> {
  const s = requireAccount(c.session);
  const model = postedModel(kit, c.form);
  // Without the script, `Update estimate` also stores the files chosen (their ids then stay in
  // their fields); htmx's requests carry none (app.js uploads them itself).
  const refused = isHtmx(c.request) ? {} : await studioFormUploads(kit.ctx, s.accountId, model, c.form);
  const { input, errors, raw } = readStudioForm(model, c.form);
  if (!isHtmx(c.request))
    return studioPage(kit, c, s, model, { values: input, errors: { ...errors, ...refused }, raw });
  // htmx: the estimate box, and the code section out of band (both from the same input).
  const est = unreadEstimate(errors) ?? (await estimateOf(kit, s, model, input));
  return htmlResponse(html`${await estimateBox(kit.ctx, s, est)}${codeSection(kit, model, input, true)}`);
}

async function uploadFile(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  try {
    // The raw bytes with their Content-Type, through the files store's own checks.
    const row = await createAccountUpload(kit.ctx, s.accountId, c.request);
    return new Response(JSON.stringify(fileView(row)), {
      status: 201,
      headers: { "content-type": "application/json" },
    });
  } catch (err) {
    // The script shows the message: the API's JSON error (type, size, magic bytes, disk).
    if (err instanceof DomainError) return errorResponse(err);
    throw err;
  }
}

export function studioPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/studio",
      kit.page((c) => showStudio(c, kit)),
    )
    .post(
      "/console/studio/estimate",
      kit.action((c) => updateEstimate(c, kit)),
    )
    .post(
      "/console/studio/upload",
      kit.action((c) => uploadFile(c, kit)),
    );
}
