// The processes scripts/bench.ts runs besides gengate: its temporary directory, the children it
// kills on exit, and the baselines and upstreams it starts (each a separate process, so the load
// generator's CPU does not count as theirs).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const work = mkdtempSync(join(tmpdir(), "gengate-bench-"));
export const children: Subprocess[] = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

/** Spawns a child and waits (20 s at most) for `pattern` on its stdout; stdout keeps draining. */
export async function spawnAndWait(
  cmd: string[],
  pattern: RegExp,
  env?: Record<string, string>,
): Promise<{ proc: Subprocess<"ignore", "pipe", "pipe">; match: RegExpExecArray }> {
  const proc = Bun.spawn(cmd, {
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    env: env ? { ...process.env, ...env } : undefined,
  });
  children.push(proc);
  let out = "";
  const reader = proc.stdout.getReader();
  const deadline = Date.now() + 20_000;
  const timeout = setTimeout(() => proc.kill(), 20_000); // ends a silent child, so read() returns done
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
    const m = pattern.exec(out);
    if (m) {
      clearTimeout(timeout);
      // Keep draining stdout so the child never blocks on a full pipe.
      void (async () => {
        for (;;) if ((await reader.read()).done) break;
      })();
      return { proc, match: m };
    }
  }
  proc.kill();
  throw new Error(`${cmd.join(" ")} did not start:\n${out}\n${await new Response(proc.stderr).text()}`);
}

/** A process's resident memory in MB (`field` of /proc/PID/status: VmRSS, RssAnon or RssFile). */
export function rssMb(pid: number, field = "VmRSS"): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0; // the process is gone
  }
}

/** A bare Bun.serve hello world: the baseline of submits and status reads. */
export async function startHelloWorld() {
  const s = await spawnAndWait(
    [
      process.execPath,
      "-e",
      'const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") }); console.log("port " + s.port);',
    ],
    /port (\d+)/,
  );
  return { proc: s.proc, url: `http://127.0.0.1:${s.match[1]}` };
}

/** The mock OpenAI upstream (scripts/bench-mock-upstream.ts): a short streamed reply with usage. */
export async function startMockUpstream() {
  const s = await spawnAndWait(
    [process.execPath, join(import.meta.dir, "bench-mock-upstream.ts")],
    /port (\d+)/,
  );
  return { proc: s.proc, url: `http://127.0.0.1:${s.match[1]}/v1` };
}

/**
 * The chat baseline: a bare Bun proxy (Bun.serve + fetch) that forwards the body to the same mock
 * upstream and streams its answer back, with no authentication, validation, billing or database.
 */
export async function startBareProxy(upstreamUrl: string) {
  const code = `const up = ${JSON.stringify(`${upstreamUrl}/chat/completions`)};
const s = Bun.serve({ port: 0, hostname: "127.0.0.1", async fetch(req) {
  const r = await fetch(up, { method: "POST", headers: { "content-type": "application/json" }, body: await req.arrayBuffer() });
  return new Response(r.body, { status: r.status, headers: { "content-type": r.headers.get("content-type") ?? "application/json" } });
} });
console.log("port " + s.port);`;
  const s = await spawnAndWait([process.execPath, "-e", code], /port (\d+)/);
  return { proc: s.proc, url: `http://127.0.0.1:${s.match[1]}/v1` };
}

/**
 * The bench's upstream that closes idle keep-alive connections as they are reused
 * (scripts/bench-idle-upstream.ts): the keep-alive race on every 11th call of each connection.
 * GET /stats on its origin answers its counts.
 */
export async function startIdleUpstream() {
  const s = await spawnAndWait(
    [process.execPath, join(import.meta.dir, "bench-idle-upstream.ts")],
    /port (\d+)/,
  );
  return { proc: s.proc, url: `http://127.0.0.1:${s.match[1]}/v1` };
}
