import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, makeTestApp } from "../helpers/context.ts";
import { parseExposition } from "./parse.ts";

const DOCS = join(import.meta.dir, "../../docs");

async function families() {
  const { request } = await makeTestApp();
  const res = await request("/metrics", { key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return parseExposition(await res.text());
}

type Panel = { type: string; title: string; targets?: { expr: string }[] };

describe("docs/metrics.md and docs/grafana-dashboard.json follow the served metrics", () => {
  test("docs/metrics.md describes every family the server exposes", async () => {
    const doc = readFileSync(join(DOCS, "metrics.md"), "utf8");
    for (const name of (await families()).keys()) expect(doc).toContain(`\`${name}\``);
  });

  test("every metric the dashboard queries exists (histogram series by their family)", async () => {
    const served = await families();
    const dash = JSON.parse(readFileSync(join(DOCS, "grafana-dashboard.json"), "utf8")) as {
      panels: Panel[];
      templating: { list: { name: string }[] };
    };
    const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const used = new Set(exprs.flatMap((e) => e.match(/\b(?:gengate|process)_[a-z_]+/g) ?? []));
    for (const name of used) {
      const family = name.replace(/_(bucket|count|sum)$/, "");
      expect(served.has(name) || served.get(family)?.type === "histogram").toBe(true);
    }
    // The core signals of the issue each have a panel.
    for (const name of [
      "gengate_http_request_duration_seconds_bucket",
      "gengate_jobs",
      "gengate_queue_depth",
      "gengate_workers_busy",
      "gengate_provider_circuit_state",
      "gengate_held_micro",
      "gengate_charged_micro_total",
      "gengate_webhook_attempts_total",
      "gengate_database_bytes",
    ])
      expect(used.has(name)).toBe(true);
    expect(dash.templating.list.map((v) => v.name)).toContain("datasource");
  });
});
