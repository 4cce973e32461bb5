/**
 * Structured logs: one JSON object per line on stdout (journald and `jq` friendly).
 * Tests and the CLI can silence them with setLogSink.
 */
type Level = "debug" | "info" | "warn" | "error";

let sink: (line: string) => void = (line) => process.stdout.write(`${line}\n`);
let minLevel: Level = (process.env.GENGATE_LOG_LEVEL as Level) || "info";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function setLogSink(fn: (line: string) => void): void {
  sink = fn;
}

export function setLogLevel(level: Level): void {
  minLevel = level;
}

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  if (order[level] < order[minLevel]) return;
  sink(JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields }, bigintReplacer));
}

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}
