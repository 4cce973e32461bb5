/**
 * A strict reader of the Prometheus text format 0.0.4, for tests: it throws on anything a
 * Prometheus server would reject or that breaks the format's rules (a sample without its family's
 * HELP and TYPE, a family declared twice or split, a bad name, a bad escape, histogram buckets
 * that are not cumulative or lack +Inf, _count that differs from the +Inf bucket).
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const VALUE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)$/;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name "${name}" in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let j = eq + 2;
    let value = "";
    for (;;) {
      const c = text[j];
      if (c === undefined) throw new Error(`unterminated label value in: ${line}`);
      if (c === '"') break;
      if (c === "\n") throw new Error(`raw line feed in a label value: ${line}`);
      if (c === "\\") {
        const e = text[j + 1];
        if (e === "\\") value += "\\";
        else if (e === '"') value += '"';
        else if (e === "n") value += "\n";
        else throw new Error(`bad escape \\${e} in: ${line}`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (i < text.length) throw new Error(`expected "," in: ${line}`);
  }
  return labels;
}

/** The base family name of a sample (histograms: _bucket, _sum, _count belong to the family). */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(name);
  if (direct) return direct;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f?.type === "histogram") return f;
  }
  return undefined;
}

export function parseExposition(text: string): Map<string, Family> {
  if (text !== "" && !text.endsWith("\n")) throw new Error("the exposition must end with a line feed");
  const families = new Map<string, Family>();
  let current: Family | null = null;
  const pendingHelp = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    let m = /^# HELP (\S+) (.*)$/.exec(line);
    if (m) {
      if (!NAME.test(m[1]!)) throw new Error(`bad name in: ${line}`);
      if (families.has(m[1]!) || pendingHelp.has(m[1]!)) throw new Error(`second HELP for ${m[1]}`);
      if (/\\[^\\n]/.test(m[2]!.replaceAll("\\\\", ""))) throw new Error(`bad escape in HELP: ${line}`);
      pendingHelp.set(m[1]!, m[2]!);
      continue;
    }
    m = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m) {
      const name = m[1]!;
      if (families.has(name)) throw new Error(`second TYPE for ${name}`);
      const help = pendingHelp.get(name);
      if (help === undefined) throw new Error(`TYPE without HELP for ${name}`);
      pendingHelp.delete(name);
      current = { name, type: m[2]!, help, samples: [] };
      families.set(name, current);
      continue;
    }
    if (line.startsWith("#")) throw new Error(`unexpected comment: ${line}`);
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const [, name, labelText, valueText] = m;
    if (!VALUE.test(valueText!)) throw new Error(`bad value in: ${line}`);
    const family = familyOf(name!, families);
    if (!family) throw new Error(`sample of an undeclared family: ${line}`);
    if (family !== current) throw new Error(`samples of ${family.name} are not together: ${line}`);
    const value = valueText === "+Inf" ? Infinity : valueText === "-Inf" ? -Infinity : Number(valueText);
    family.samples.push({ name: name!, labels: labelText ? parseLabels(labelText, line) : {}, value });
  }
  if (pendingHelp.size > 0) throw new Error(`HELP without TYPE: ${[...pendingHelp.keys()]}`);
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}_bucket without le`);
      entry.buckets.push([le === "+Inf" ? Infinity : Number(le), s.value]);
    } else if (s.name === `${f.name}_count`) entry.count = s.value;
    else if (s.name === `${f.name}_sum`) entry.sum = s.value;
    else throw new Error(`histogram ${f.name} has a plain sample ${s.name}`);
  }
  for (const [key, e] of series) {
    const last = e.buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket last`);
    for (let i = 1; i < e.buckets.length; i++) {
      if (!(e.buckets[i]![0] > e.buckets[i - 1]![0])) throw new Error(`${f.name}${key}: le not increasing`);
      if (e.buckets[i]![1] < e.buckets[i - 1]![1]) throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
    if (e.count !== last[1]) throw new Error(`${f.name}${key}: _count ${e.count} != +Inf bucket ${last[1]}`);
    if (e.sum === undefined) throw new Error(`${f.name}${key}: no _sum`);
  }
}

/** The value of the one sample of `name` whose labels include `labels` (undefined if none). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = familyOf(name, families);
  const hits = (family?.samples ?? []).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return hits[0]?.value;
}
