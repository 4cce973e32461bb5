import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pollUntil } from "./helpers/api.ts";
import { systemTmpdir } from "./helpers/watchdog.ts";

const ROOT = resolve(import.meta.dir, "..");

test("the run's temporary files live under one directory of its own", () => {
  const run = tmpdir();
  expect(run.startsWith(join(systemTmpdir(), "gengate-test-run-"))).toBe(true);
  expect(existsSync(run)).toBe(true);
});

test("a test run's temporary directory is removed once the run is over", async () => {
  // A run of its own (bun test in a child process, the repository's bunfig and so its preload),
  // whose one test makes a temporary directory and prints where it is.
  const fixture = mkdtempSync(join(systemTmpdir(), "gengate-preload-fixture-"));
  const file = join(fixture, "leak.test.ts");
  writeFileSync(
    file,
    `import { test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
test("leaves a file behind", () => {
  const dir = mkdtempSync(join(tmpdir(), "left-"));
  writeFileSync(join(dir, "f"), "x");
  console.log("MADE " + dir);
});
`,
  );
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.GENGATE_TEST_SYSTEM_TMPDIR;
  env.TMPDIR = systemTmpdir();
  const proc = Bun.spawn([process.execPath, "test", file], {
    cwd: ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited).toBe(0);
  const made = /MADE (\S+)/.exec(out + err)?.[1];
  expect(made).toBeDefined();
  expect(made!.startsWith(join(systemTmpdir(), "gengate-test-run-"))).toBe(true);
  const runDir = join(made!, "..");
  await pollUntil(
    async () => existsSync(runDir),
    (exists) => !exists,
    10_000,
  );
  rmSync(fixture, { recursive: true, force: true });
});
