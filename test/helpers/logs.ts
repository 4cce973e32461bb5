import { setLogSink } from "../../src/lib/log.ts";

/** Captured log lines of in-process apps and services (tests assert on them instead of printing). */
export const logLines: string[] = [];
setLogSink((line) => {
  logLines.push(line);
  if (logLines.length > 5000) logLines.splice(0, 1000);
});
