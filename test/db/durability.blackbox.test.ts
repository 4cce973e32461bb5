import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { startFunded } from "../helpers/api.ts";
import { tempDir } from "../helpers/server.ts";

// Durable commits (docs/decisions.md): on the running server, every acknowledged write (a submit, a
// settled chat call, a top-up) is answered only after the WAL holding it was synced. Checked from
// outside with strace attached to the server: between two 2xx answers, an fdatasync/fsync of
// gengate.db-wal must have completed. CI installs strace (.ci/run); on PostgreSQL durability is the
// database server's (its own WAL), so this runs on SQLite only.

const strace = Bun.which("strace");
const onSqlite = process.env.GENGATE_TEST_BACKEND !== "postgres";

/** Whether each 2xx answer in the trace was preceded by a completed WAL sync since the previous one. */
export function syncedAnswers(trace: string): boolean[] {
  const answers: boolean[] = [];
  const pending = new Set<string>();
  let synced = false;
  for (const line of trace.split("\n")) {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, pid, call] = m as unknown as [string, string, string];
    if (/^f(data)?sync\(\d+<[^>]*gengate\.db-wal>/.test(call)) {
      if (/\) = 0$/.test(call)) synced = true;
      else if (call.includes("<unfinished ...>")) pending.add(pid);
    } else if (/^<\.\.\. f(data)?sync resumed>.*= 0$/.test(call) && pending.has(pid)) {
      pending.delete(pid);
      synced = true;
    } else if (/^(sendto|write|writev|sendmsg)\(\d+<TCP:\[/.test(call) && call.includes("HTTP/1.1 2")) {
      answers.push(synced);
      synced = false;
    }
  }
  return answers;
}

test.skipIf(!strace || !onSqlite)(
  "each acknowledged submit, settled chat call and top-up is answered after a WAL sync",
  async () => {
    const s = await startFunded();
    const account = (await (await s.fetch("/v1/account")).json()) as { id: string };
    const dir = tempDir();
    const out = join(dir, "trace.txt");
    const tracer = Bun.spawn(
      [
        strace!,
        "-f",
        "-yy",
        "-s",
        "16",
        "-e",
        "trace=fdatasync,fsync,sendto,write,writev,sendmsg",
        "-o",
        out,
        "-p",
        String(s.proc.pid),
      ],
      { stdout: "ignore", stderr: "pipe", stdin: "ignore" },
    );
    try {
      // strace says "Process N attached" on stderr once it traces the server.
      let err = "";
      const reader = tracer.stderr.getReader();
      while (!/attached/.test(err)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`strace could not attach: ${err}`);
        err += new TextDecoder().decode(value);
      }
      void (async () => {
        for (;;) if ((await reader.read()).done) break;
      })();
      await Bun.sleep(300); // the server's other threads

      for (let i = 0; i < 4; i++) {
        const res = await s.post("/v1/queue/sandbox/image", { prompt: `durable ${i}` });
        expect(res.status).toBe(202);
        await res.arrayBuffer();
      }
      for (let i = 0; i < 2; i++) {
        const res = await s.post("/v1/chat/completions", {
          model: "sandbox/chat",
          messages: [{ role: "user", content: "hello" }],
          max_tokens: 8,
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      const credit = await fetch(`${s.url}/admin/v1/accounts/${account.id}/credit`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ amount: "5", reason: "durability test" }),
      });
      expect(credit.status).toBe(200);
      await credit.arrayBuffer();
      await Bun.sleep(100);
    } finally {
      tracer.kill("SIGINT"); // detaches; the server keeps running
      await tracer.exited;
    }
    const trace = await Bun.file(out).text();
    const answers = syncedAnswers(trace);
    try {
      expect(answers).toHaveLength(7);
      expect(answers).toEqual(Array(7).fill(true));
    } catch (e) {
      console.error(trace.slice(-4000));
      throw e;
    } finally {
      await s.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
