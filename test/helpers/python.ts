import { runCommand } from "./server.ts";

/**
 * Runs a Python probe script (a client SDK driving a test server) and reads the JSON it prints:
 * `out` is that JSON, or `error` says how the script ended otherwise (exit code and stderr). The
 * script is killed after `timeoutMs`.
 */
export async function runPythonProbe(
  python: string,
  script: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ out: unknown; error: string | null }> {
  const r = await runCommand([python, script], env, timeoutMs);
  if (r.code !== 0) return { out: null, error: `${script} exited with ${r.code}:\n${r.stderr}` };
  return { out: JSON.parse(r.stdout) as unknown, error: null };
}
