import { join } from "node:path";

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
  const proc = Bun.spawn([python, join(import.meta.dir, "../compat", script)], {
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  if (code !== 0) return { probe: null, error: `${script} exited with ${code}:\n${stderr}` };
  return { probe: JSON.parse(stdout) as T, error: null };
}
