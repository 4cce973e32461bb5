/** Shared by the studio tests: a valid input for any model form, and a rendered form read back. */
import type { Model } from "../../src/catalog/model.ts";
import { studioFields } from "../../src/studio/form.ts";

/** A valid input setting every field of the model's form (bounds and enums respected). */
export function sampleInput(model: Model): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of studioFields(model)) {
    const s = f.schema;
    let v: unknown;
    switch (f.control) {
      case "select":
        v = (s.enum as unknown[])[(s.enum as unknown[]).length - 1];
        break;
      case "number":
        v =
          typeof s.minimum === "number"
            ? s.minimum + (typeof s.maximum === "number" && s.maximum > s.minimum ? 1 : 0)
            : 1;
        break;
      case "checkbox":
        v = true;
        break;
      case "url":
        v = 'https://example.com/in put.png?a=1&b="2"';
        break;
      case "json":
        v = {};
        break;
      default:
        v = `a fox <b>&</b> "quoted" 'x'`;
    }
    if (f.path.length === 1) input[f.path[0]] = v;
    else {
      input[f.path[0]] ??= {};
      (input[f.path[0]] as Record<string, unknown>)[f.path[1]] = v;
    }
  }
  // The sandbox would fail or slow the job: a round trip does not need them on.
  return input;
}

const unescapeHtml = (t: string) =>
  t
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");

/** What a browser would submit for a rendered form (inputs, ticked checkboxes, selects, textareas). */
export function formOf(markup: string): URLSearchParams {
  const out = new URLSearchParams();
  for (const m of markup.matchAll(/<input\b([^>]*)>/g)) {
    const attrs = m[1]!;
    const name = /\bname="([^"]*)"/.exec(attrs)?.[1];
    if (!name) continue;
    const type = /\btype="([^"]*)"/.exec(attrs)?.[1] ?? "text";
    if (type === "checkbox" && !/\bchecked\b/.test(attrs)) continue;
    out.append(unescapeHtml(name), unescapeHtml(/\bvalue="([^"]*)"/.exec(attrs)?.[1] ?? ""));
  }
  for (const m of markup.matchAll(/<select\b[^>]*\bname="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const selected = /<option value="([^"]*)" selected>/.exec(m[2]!)?.[1] ?? "";
    out.append(unescapeHtml(m[1]!), unescapeHtml(selected));
  }
  for (const m of markup.matchAll(/<textarea\b[^>]*\bname="([^"]*)"[^>]*>([\s\S]*?)<\/textarea>/g)) {
    out.append(unescapeHtml(m[1]!), unescapeHtml(m[2]!));
  }
  return out;
}
