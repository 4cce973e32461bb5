/**
 * Runs a Python probe script (test/compat/*_probe.py) against a server: GENGATE_BASE_URL is
 * `{url}/v1`, GENGATE_KEY the key; killed after `timeoutMs`. The probe prints one JSON document on
 * success; a non-zero exit gives its stderr as the error.
 */
export async function runPythonProbe<T>(
  python: string,
  script: string,
  server: { url: string; key: string },
  timeoutMs = 60_000,
): Promise<{ probe: T; error: null } | { probe: null; error: string }> {
  const proc = Bun.spawn([python, script], {
    env: { ...process.env, GENGATE_BASE_URL: `${server.url}/v1`, GENGATE_KEY: server.key },
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
