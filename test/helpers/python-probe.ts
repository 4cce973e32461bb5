import { join } from "node:path";
import { runCommand } from "./server.ts";

/**
 * Runs a probe script of test/compat/ (a Python client driving a gengate server, printing what it
 * saw as one JSON document) with `python`, killed after `timeoutMs`. A non-zero exit is the error
 * with the script's stderr, for the test "the probe ran to the end" to show.
 */
export async function runPythonProbe<T>(
  python: string,
  script: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ probe: T; error: null } | { probe: null; error: string }> {
  const run = await runCommand(
    [python, join(import.meta.dir, "../compat", script)],
    { ...process.env, ...env },
    timeoutMs,
  );
  if (run.code !== 0) return { probe: null, error: `${script} exited with ${run.code}:\n${run.stderr}` };
  return { probe: JSON.parse(run.stdout) as T, error: null };
}
