/**
 * The studio's history (issue 17): the signed-in person's own studio runs in the session's account
 * (src/studio/service.ts `studioRuns`), newest first, 20 a page with an `Older` link: status, model,
 * time, charge, and a gallery of the media outputs (fresh signed links, as the run page makes
 * them). Each run opens its page, /console/studio/runs/<id>.
 */
import { html, type SafeHtml } from "../lib/html.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import { type StudioHistoryDeps, type StudioRun, studioRuns } from "../studio/service.ts";
import { formatMoney } from "./format.ts";
import type { AccountSession, ConsoleKit, ConsoleKitDeps } from "./kit.ts";
import { isoText, statusBadge } from "./requests-view.ts";

export const HISTORY_PAGE = 20;

function chargeText(r: StudioRun): string {
  const p = r.price;
  if (p.charged_micro !== null) return formatMoney(BigInt(p.charged_micro), p.currency);
  if (p.reserved_micro !== null) return `${formatMoney(BigInt(p.reserved_micro), p.currency)} held`;
  return "—";
}

function thumbnail(
  kit: ConsoleKit<ConsoleKitDeps & StudioHistoryDeps>,
  r: StudioRun,
  o: StudioRun["outputs"][number],
): SafeHtml | null {
  let same = false;
  try {
    same = new URL(o.url).origin === kit.origin;
  } catch {}
  if (!same) return null;
  const label = `Output ${o.index + 1} of ${r.model_id}`;
  if (o.content_type.startsWith("image/"))
    return html`<img src="${o.url}" alt="${label}" loading="lazy" width="120">`;
  if (o.content_type.startsWith("video/"))
    return html`<video preload="metadata" muted src="${o.url}" aria-label="${label}" width="120"></video>`;
  if (o.content_type.startsWith("audio/")) return html`<span class="hint">${label} (audio)</span>`;
  return null;
}

/** The history section of the studio page; `before` is the `runs_before` cursor of the page URL. */
export async function studioHistory(
  kit: ConsoleKit<ConsoleKitDeps & StudioHistoryDeps>,
  s: AccountSession,
  before: string | null,
  modelId: string,
): Promise<SafeHtml> {
  const here = `/console/studio?model=${encodeURIComponent(modelId)}`;
  const cursor = before && UUID_PATTERN.test(before) ? before : null;
  const { items, next_cursor } = await studioRuns(kit.ctx, s.accountId, s.personId, {
    limit: HISTORY_PAGE,
    cursor,
  });
  return html`<section id="studio-history" aria-labelledby="studio-history-title">
<h2 id="studio-history-title">Your runs</h2>
${
  items.length === 0
    ? html`<p class="hint">${cursor ? "No older runs." : "Your studio runs will be listed here."}</p>`
    : html`<ul class="studio-history">${items.map(
        (r) => html`<li data-run="${r.request_id}">
  <a href="/console/studio/runs/${r.request_id}">${statusBadge(r.status)} <span class="mono">${r.model_id}</span></a>
  <time datetime="${r.created_at}">${isoText(r.created_at)}</time>
  <span data-run-charge>${chargeText(r)}</span>
  ${
    r.outputs.length
      ? html`<a class="studio-gallery" href="/console/studio/runs/${r.request_id}">${r.outputs.map((o) => thumbnail(kit, r, o))}</a>`
      : null
  }
</li>`,
      )}</ul>`
}
<p>${cursor ? html`<a href="${here}#studio-history">Newest</a> ` : null}${next_cursor ? html`<a href="${`${here}&runs_before=${next_cursor}#studio-history`}">Older</a>` : null}</p>
</section>`;
}
