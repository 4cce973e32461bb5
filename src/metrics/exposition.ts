/**
 * The Prometheus text exposition format, version 0.0.4: one `# HELP` and one `# TYPE` line per
 * metric family, then its samples `name{label="value",...} number`. Small enough to write by hand,
 * which keeps the binary free of a metrics library. Reference:
 * https://github.com/prometheus/docs/blob/main/content/docs/instrumenting/exposition_formats.md
 */

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type MetricType = "counter" | "gauge" | "histogram";
export type Labels = Readonly<Record<string, string>>;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value: backslash, double quote and line feed are escaped. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value)
    ? value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")
    : value;
}

/** HELP text: backslash and line feed are escaped (double quotes are not). */
export function escapeHelp(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

/** A sample value: integers exactly (bigint too), +Inf / -Inf / NaN spelled as Prometheus reads them. */
export function formatValue(value: number | bigint): string {
  if (typeof value === "bigint") return value.toString();
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

function labelText(labels: Labels | undefined): string {
  if (!labels) return "";
  let out = "";
  for (const name in labels) {
    if (!LABEL_NAME.test(name) || name.startsWith("__")) throw new Error(`bad label name ${name}`);
    out += `${out ? "," : ""}${name}="${escapeLabelValue(labels[name]!)}"`;
  }
  return out ? `{${out}}` : "";
}

/**
 * Builds one exposition. Families must be declared before their samples; a family is written
 * once (a second declaration of the same name is an error: Prometheus rejects the scrape).
 */
export class ExpositionWriter {
  private readonly parts: string[] = [];
  private readonly declared = new Set<string>();
  private current: { name: string; type: MetricType } | null = null;

  family(name: string, type: MetricType, help: string): this {
    if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
    if (this.declared.has(name)) throw new Error(`metric ${name} declared twice`);
    this.declared.add(name);
    this.current = { name, type };
    this.parts.push(`# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`);
    return this;
  }

  /** A sample of the current family (for histograms: `suffix` is _bucket, _sum or _count). */
  sample(labels: Labels | undefined, value: number | bigint, suffix = ""): this {
    if (!this.current) throw new Error("sample before family");
    this.parts.push(`${this.current.name}${suffix}${labelText(labels)} ${formatValue(value)}\n`);
    return this;
  }

  /**
   * A histogram series from per-bucket counts (not cumulative; the last entry counts values above
   * the highest bound). Writes the cumulative _bucket lines (le="+Inf" included), _sum and _count.
   */
  histogram(labels: Labels, bounds: readonly number[], counts: ArrayLike<number>, sum: number): this {
    let cumulative = 0;
    for (let i = 0; i < bounds.length; i++) {
      cumulative += counts[i]!;
      this.sample({ ...labels, le: formatValue(bounds[i]!) }, cumulative, "_bucket");
    }
    cumulative += counts[bounds.length]!;
    this.sample({ ...labels, le: "+Inf" }, cumulative, "_bucket");
    this.sample(labels, sum, "_sum");
    this.sample(labels, cumulative, "_count");
    return this;
  }

  text(): string {
    return this.parts.join("");
  }
}
