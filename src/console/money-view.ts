/**
 * Markup shared by the money pages (overview, keys, usage, wallet, billing). Every amount is shown
 * by the one display rule (displayMoney: cents from 1 unit up, the exact amount below) inside a
 * `<data value="MICRO">` element, so tests and scripts read the exact micro-units a page shows
 * (console-truth.test.ts) while people read the formatted text; the CSVs carry the exact amounts.
 */

import { html, raw, type SafeHtml } from "../lib/html.ts";
import { formatMicro } from "../lib/money.ts";
import { displayMoney, formatTime } from "./format.ts";

/** An amount: the displayed text, the exact micro-units in `value`. */
export function money(micro: bigint, currency: string): SafeHtml {
  // The exact amount stays machine-readable in `value` and in the pages' CSV downloads (wallet,
  // usage); a title attribute would change the `<data value="N">` markup scripts and tests read.
  return html`<data value="${micro}">${displayMoney(micro, currency).text}</data>`;
}

/** An RFC 3339 time as `<time>` ("2026-11-23 15:04 UTC"), or a dash. */
export function when(iso: string | null): SafeHtml {
  if (!iso) return html`<span class="hint">never</span>`;
  return html`<time datetime="${iso}">${formatTime(Date.parse(iso), "ms")}</time>`;
}

/**
 * A table that scrolls inside its own box on a narrow screen (the page never scrolls sideways);
 * the box is a labelled, focusable region so keyboard users can scroll it too.
 */
export function tableBox(label: string, table: SafeHtml): SafeHtml {
  return html`<div class="table-wrap" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}

/**
 * `<script type="application/json" id=ID>` for data-chart: the JSON is built here, with `<`, `>`
 * and `&` written as \u escapes so no value (a key's name) can end the element. Amounts are written
 * as decimal numbers from micro-units with string arithmetic (no float on the server).
 */
export function chartData(
  id: string,
  data: {
    x: number[];
    x_label: "Day" | "Month";
    series: { label: string; values: bigint[] }[];
    unit: string;
  },
): SafeHtml {
  const str = (s: string) =>
    JSON.stringify(s).replace(
      /[<>&\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
  const series = data.series
    .map((s) => `{"label":${str(s.label)},"values":[${s.values.map((v) => formatMicro(v)).join(",")}]}`)
    .join(",");
  const json = `{"x":[${data.x.join(",")}],"x_label":${str(data.x_label)},"series":[${series}],"unit":${str(data.unit)}}`;
  // raw: our own JSON, every string escaped above.
  return html`<script type="application/json" id="${id}">${raw(json)}</script>`;
}

/** A CSV download (attachment, never cached): every export streams (`csvStream`, src/lib/csv.ts). */
export function csvResponse(filename: string, body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${filename}"`,
    },
  });
}

/** A short muted line for empty tables. */
export function empty(text: string): SafeHtml {
  return html`<p class="hint">${text}</p>`;
}
