import { writeSync } from "node:fs";
import { stringifyWithBigints } from "./json.ts";

/**
 * Structured logs: one JSON object per line on stdout (journald and `jq` friendly).
 * Lines are batched and written once per event-loop turn: one write syscall per line cost a
 * third of the server's CPU under load (measured with --cpu-prof). Errors and exit flush at once.
 * Tests and the CLI can redirect them with setLogSink.
 */
type Level = "debug" | "info" | "warn" | "error";

let pending: string[] = [];
let scheduled = false;
const flushStdout = () => {
  scheduled = false;
  if (pending.length === 0) return;
  const text = `${pending.join("\n")}\n`;
  pending = [];
  try {
    writeSync(1, text);
  } catch {
    // stdout closed (EPIPE): nothing sensible to do with a log line.
  }
};
process.on("exit", flushStdout);

let sink: (line: string) => void = (line) => {
  pending.push(line);
  if (pending.length >= 512) flushStdout();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(flushStdout);
  }
};
const minLevel: Level = (process.env.GENGATE_LOG_LEVEL as Level) || "info";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Sends every line to `fn` from now on; returns the sink it replaced, for the caller to put back. */
export function setLogSink(fn: (line: string) => void): (line: string) => void {
  const previous = sink;
  sink = fn;
  return previous;
}

/** Writes any batched lines now (before printing to stdout directly, and at shutdown). */
export function flushLogs(): void {
  flushStdout();
}

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  if (order[level] < order[minLevel]) return;
  const entry = { ts: new Date().toISOString(), level, msg, ...fields };
  let line: string;
  try {
    // Without a replacer: a replacer function makes stringify several times slower, and this
    // runs once per request. Only a bigint field throws, and then takes the slow path.
    line = JSON.stringify(entry);
  } catch {
    line = stringifyWithBigints(entry);
  }
  sink(line);
  if (level === "error") flushStdout();
}

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}
