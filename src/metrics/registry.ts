import type { ExpositionWriter, Labels } from "./exposition.ts";

/**
 * Counters kept in memory (reset when the process restarts, as Prometheus expects of counters).
 * Values are numbers, or bigints for money, so micro-units never pass through floating point.
 * Meant for events that happen per job or per webhook attempt, not per HTTP request: an increment
 * joins its label values into one map key.
 */
export class Counter<V extends number | bigint = number> {
  private readonly series = new Map<string, { labels: string[]; value: V }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    private readonly zero: V,
  ) {}

  inc(labelValues: readonly string[], by: V): void {
    const key = labelValues.join("\u0000");
    const s = this.series.get(key);
    if (s) s.value = ((s.value as bigint) + (by as bigint)) as V;
    else
      this.series.set(key, {
        labels: [...labelValues],
        value: ((this.zero as bigint) + (by as bigint)) as V,
      });
  }

  /** The value of one series (0 when it never moved); for tests and collectors. */
  get(labelValues: readonly string[]): V {
    return this.series.get(labelValues.join("\u0000"))?.value ?? this.zero;
  }

  write(out: ExpositionWriter): void {
    out.family(this.name, "counter", this.help);
    for (const s of this.series.values()) out.sample(this.labelsOf(s.labels), s.value);
  }

  private labelsOf(values: string[]): Labels {
    const labels: Record<string, string> = {};
    for (let i = 0; i < this.labelNames.length; i++) labels[this.labelNames[i]!] = values[i]!;
    return labels;
  }
}

/** Upper bounds (seconds) of the request latency buckets: 1 ms up to /run's 90 s wait. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 90,
];

interface Series {
  /** Per bucket, not cumulative; the last slot counts values above the highest bound. */
  counts: Float64Array;
  sum: number;
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The route label of a request that matched no route (404, 405, a body refused before routing). */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * HTTP requests by method, route template and status, with their latency. Called once per
 * request, so it allocates nothing once a (route, method, status) series exists: three map
 * lookups on strings the router already interned and a number, a scan of 15 bucket bounds, two
 * additions. Label cardinality is bounded: routes are the app's templates, methods a fixed set
 * (anything else is "other"), statuses the few codes the app answers.
 */
export class RequestHistogram {
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: readonly number[] = LATENCY_BUCKETS,
  ) {}

  observe(method: string, route: string | null, status: number, seconds: number): void {
    const r = route ?? UNMATCHED_ROUTE;
    const m = METHODS.has(method) ? method : "other";
    let byMethod = this.byRoute.get(r);
    if (!byMethod) {
      byMethod = new Map();
      this.byRoute.set(r, byMethod);
    }
    let byStatus = byMethod.get(m);
    if (!byStatus) {
      byStatus = new Map();
      byMethod.set(m, byStatus);
    }
    let s = byStatus.get(status);
    if (!s) {
      s = { counts: new Float64Array(this.bounds.length + 1), sum: 0 };
      byStatus.set(status, s);
    }
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += seconds;
  }

  /** Requests seen for one series (tests). */
  count(method: string, route: string | null, status: number): number {
    const s = this.byRoute
      .get(route ?? UNMATCHED_ROUTE)
      ?.get(method)
      ?.get(status);
    return s ? s.counts.reduce((a, b) => a + b, 0) : 0;
  }

  write(out: ExpositionWriter): void {
    out.family(this.name, "histogram", this.help);
    for (const [route, byMethod] of this.byRoute)
      for (const [method, byStatus] of byMethod)
        for (const [status, s] of byStatus)
          out.histogram({ method, route, status: String(status) }, this.bounds, s.counts, s.sum);
  }
}
