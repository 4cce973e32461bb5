import { describe, expect, test } from "bun:test";
import { ExpositionWriter, escapeHelp, escapeLabelValue, formatValue } from "../../src/metrics/exposition.ts";
import { Counter, RequestHistogram, UNMATCHED_ROUTE } from "../../src/metrics/registry.ts";
import { parseExposition, sampleValue } from "./parse.ts";

describe("exposition format 0.0.4", () => {
  test("label values escape backslash, double quote and line feed; HELP escapes backslash and line feed", () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    expect(escapeLabelValue("/v1/requests/:request_id")).toBe("/v1/requests/:request_id");
    expect(escapeHelp('x\\y\n"z"')).toBe('x\\\\y\\n"z"');
  });

  test("values: integers exactly, bigints beyond 2^53, infinities and NaN as Prometheus spells them", () => {
    expect(formatValue(42)).toBe("42");
    expect(formatValue(0.25)).toBe("0.25");
    expect(formatValue(9_007_199_254_740_993n)).toBe("9007199254740993");
    expect(formatValue(Infinity)).toBe("+Inf");
    expect(formatValue(-Infinity)).toBe("-Inf");
    expect(formatValue(NaN)).toBe("NaN");
  });

  test("a writer's output round-trips through a strict parser, hostile label values included", () => {
    const out = new ExpositionWriter();
    out.family("t_gauge", "gauge", 'Help with "quotes", a \\ and a\nline feed.');
    out.sample({ model: 'evil"}\n\\', state: "IN_QUEUE" }, 3);
    out.sample(undefined, 2n ** 60n);
    out.family("t_hist", "histogram", "A histogram.");
    out.histogram({ route: "/a" }, [0.1, 1], [2, 1, 4], 12.5);
    const families = parseExposition(out.text());
    expect(families.get("t_gauge")!.help).toBe('Help with "quotes", a \\\\ and a\\nline feed.');
    expect(sampleValue(families, "t_gauge", { model: 'evil"}\n\\' })).toBe(3);
    expect(sampleValue(families, "t_hist_bucket", { route: "/a", le: "0.1" })).toBe(2);
    expect(sampleValue(families, "t_hist_bucket", { route: "/a", le: "1" })).toBe(3);
    expect(sampleValue(families, "t_hist_bucket", { route: "/a", le: "+Inf" })).toBe(7);
    expect(sampleValue(families, "t_hist_count", { route: "/a" })).toBe(7);
    expect(sampleValue(families, "t_hist_sum", { route: "/a" })).toBe(12.5);
  });

  test("the writer refuses what Prometheus would reject", () => {
    expect(() => new ExpositionWriter().family("bad-name", "gauge", "x")).toThrow();
    expect(() => new ExpositionWriter().family("a", "gauge", "x").family("a", "gauge", "x")).toThrow();
    expect(() => new ExpositionWriter().family("a", "gauge", "x").sample({ "bad-label": "v" }, 1)).toThrow();
    expect(() => new ExpositionWriter().sample(undefined, 1)).toThrow();
  });

  test("the test parser itself rejects broken expositions (so the tests that use it can fail)", () => {
    const bad = [
      "a 1\n", // no HELP/TYPE
      "# HELP a x\n# TYPE a gauge\na 1", // no final line feed
      '# HELP a x\n# TYPE a gauge\na{l="\\q"} 1\n', // bad escape
      "# HELP a x\n# TYPE a gauge\na one\n", // bad value
      "# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\nb 1\na 1\n", // family split
      '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', // no +Inf
    ];
    for (const text of bad) expect(() => parseExposition(text)).toThrow();
  });
});

describe("in-memory instruments", () => {
  test("a bigint counter adds micro-units exactly, per label set", () => {
    const c = new Counter<bigint>("t_money_total", "Money.", ["currency", "model"], 0n);
    c.inc(["USD", "m"], 9_007_199_254_740_993n);
    c.inc(["USD", "m"], 1n);
    c.inc(["RUB", "m"], 5n);
    expect(c.get(["USD", "m"])).toBe(9_007_199_254_740_994n);
    const out = new ExpositionWriter();
    c.write(out);
    expect(out.text()).toContain('t_money_total{currency="USD",model="m"} 9007199254740994\n');
    expect(out.text()).toContain('t_money_total{currency="RUB",model="m"} 5\n');
  });

  test("request histogram: buckets by upper bound, unknown methods as other, no route as unmatched", () => {
    const h = new RequestHistogram("t_http_seconds", "Requests.", [0.01, 0.1]);
    h.observe("GET", "/v1/models", 200, 0.005);
    h.observe("GET", "/v1/models", 200, 0.01); // on the bound: le="0.01"
    h.observe("GET", "/v1/models", 200, 5);
    h.observe("BREW", null, 404, 0.001);
    expect(h.count("GET", "/v1/models", 200)).toBe(3);
    expect(h.count("other", UNMATCHED_ROUTE, 404)).toBe(1);
    const out = new ExpositionWriter();
    h.write(out);
    const f = parseExposition(out.text());
    const labels = { method: "GET", route: "/v1/models", status: "200" };
    expect(sampleValue(f, "t_http_seconds_bucket", { ...labels, le: "0.01" })).toBe(2);
    expect(sampleValue(f, "t_http_seconds_bucket", { ...labels, le: "0.1" })).toBe(2);
    expect(sampleValue(f, "t_http_seconds_count", labels)).toBe(3);
    expect(sampleValue(f, "t_http_seconds_sum", labels)).toBeCloseTo(5.015, 9);
    expect(
      sampleValue(f, "t_http_seconds_count", { method: "other", route: "unmatched", status: "404" }),
    ).toBe(1);
  });
});
