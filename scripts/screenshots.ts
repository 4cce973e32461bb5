// scripts/screenshots: see the shell script of that name. Starts gengate on a temp data dir (the binary
// with --bin or GENGATE_BIN, else the sources), opens every page of test/helpers/console-pages.ts as its
// visitor (signed in through `gengate user invite`), writes <name>-desktop.png and <name>-phone.png,
// prints what the page did wrong (off-origin requests, console errors, axe findings) and rewrites the
// block between the screenshot markers in docs/console.md.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import {
  axeViolations,
  formatAxe,
  launchBrowser,
  overflowsHorizontally,
  screenshots,
  VIEWPORTS,
} from "../test/helpers/browser.ts";
import { PAGES, type PageEntry, startSweepServer, visitPages } from "../test/helpers/console-pages.ts";

const ROOT = resolve(import.meta.dir, "..");
const START = "<!-- screenshots:start (scripts/screenshots rewrites this block) -->";
const END = "<!-- screenshots:end -->";

function parse(argv: string[]): { bin: string | null; only: string[] | null; out: string } {
  let bin: string | null = process.env.GENGATE_BIN || null;
  let only: string[] | null = null;
  let out = join(ROOT, "docs/console");
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (!v) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--bin") bin = value();
    else if (a === "--only") only = value().split(",");
    else if (a === "--out") out = resolve(value());
    else
      throw new Error(
        `unknown argument ${a} (scripts/screenshots [--bin FILE] [--only NAME,NAME] [--out DIR])`,
      );
  }
  return { bin, only, out };
}

/** The markdown block: one heading per page, the desktop and the phone capture side by side. */
function markdownBlock(entries: readonly PageEntry[], outDir: string): string {
  const dir = relative(join(ROOT, "docs"), outDir);
  const lines = [START, "Captured by `scripts/screenshots` at 1280 px (desktop) and 360 px (phone).", ""];
  for (const e of entries) {
    lines.push(
      `### ${e.title}`,
      "",
      `\`${e.path}\`${e.as === "anonymous" ? "" : `, signed in as ${e.as === "operator" ? "an operator" : "an owner"}`}`,
      "",
    );
    lines.push(
      `<img src="${dir}/${e.name}-desktop.png" alt="${e.title}, desktop" width="640"> <img src="${dir}/${e.name}-phone.png" alt="${e.title}, phone" width="180">`,
      "",
    );
  }
  lines.push(END);
  return lines.join("\n");
}

/** Rewrites the marked block of docs/console.md, or appends a "Screenshots" section with it. */
function updateDoc(block: string): void {
  const doc = join(ROOT, "docs/console.md");
  const text = existsSync(doc) ? readFileSync(doc, "utf8") : "# The web console\n";
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  const next =
    a >= 0 && b > a
      ? text.slice(0, a) + block + text.slice(b + END.length)
      : `${text.trimEnd()}\n\n## Screenshots\n\n${block}\n`;
  writeFileSync(doc, next);
}

const { bin, only, out } = parse(process.argv.slice(2));
if (bin) process.env.GENGATE_BIN = resolve(bin); // read by test/helpers/server.ts
const entries = only ? PAGES.filter((p) => only.includes(p.name)) : PAGES;
if (only && entries.length !== only.length) {
  throw new Error(`unknown page name in --only; known: ${PAGES.map((p) => p.name).join(", ")}`);
}

const server = await startSweepServer();
const browser = await launchBrowser();
let bad = 0;
try {
  console.log(
    `screenshots: ${bin ? `binary ${bin}` : "sources"} at ${server.url} -> ${relative(ROOT, out)}/`,
  );
  await visitPages(browser, server, entries, async (entry, g) => {
    const files = await screenshots(g.page, out, entry.name);
    const problems = g.problems();
    const axe = await axeViolations(g.page);
    // The phone capture is clipped at 360 px: a page wider than that would hide it, so say so.
    await g.page.setViewportSize(VIEWPORTS.phone);
    const wide = await overflowsHorizontally(g.page);
    const notes = [
      ...problems.map((p) => `${p.kind}: ${p.detail}`),
      ...(axe.length ? [`axe:\n${formatAxe(axe)}`] : []),
      ...(wide ? ["scrolls sideways at 360 px (the phone capture is cut at the right edge)"] : []),
    ];
    if (notes.length && !entry.thirdParty) bad += 1;
    console.log(`  ${entry.name}: ${files.map((f) => relative(ROOT, f)).join(", ")}`);
    for (const n of notes)
      console.log(`    ${entry.thirdParty ? "(third party) " : ""}${n.replaceAll("\n", "\n    ")}`);
  });
} finally {
  await browser.close();
  server.cleanup();
}
if (!only) updateDoc(markdownBlock(entries, out));
if (!only) console.log("screenshots: docs/console.md updated");
if (bad) {
  console.error(`screenshots: ${bad} page(s) misbehaved (above); the PNGs were written anyway`);
  process.exit(1);
}
