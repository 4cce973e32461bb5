import { expect, test } from "bun:test";
import { join } from "node:path";

// serve's re-execution (src/server/allocator.ts) must not print process.execve's "experimental"
// warning when the exec fails (a foreign binary under qemu-user, a sandbox refusing exec), and must
// not swallow any other warning. Run in a child process: warnings are process-wide.
const script = `
  import { hideExecveWarning } from ${JSON.stringify(join(import.meta.dir, "../../src/server/allocator.ts"))};
  hideExecveWarning();
  try { process.execve("/nonexistent/gengate", ["/nonexistent/gengate"], {}); } catch { console.error("exec failed"); }
  await Bun.sleep(20);
  process.emitWarning("a later warning", "TestWarning");
  await Bun.sleep(20);
`;

test("a failed re-execution prints no execve warning; later warnings still print", async () => {
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(0);
  expect(stderr).toContain("exec failed");
  expect(stderr).not.toContain("ExperimentalWarning");
  expect(stderr).toContain("TestWarning: a later warning");
});
