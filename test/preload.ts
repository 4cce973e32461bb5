// Preloaded by bun test (bunfig.toml). Every temporary file and directory of the run (the test
// helpers' data dirs, files roots and configs, and those of the servers the tests start, which
// inherit TMPDIR) goes under one directory of its own, removed once the test process is gone: a
// whole run made about 2,400 directories under /tmp and left them there.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shellQuote, whenGone } from "./helpers/watchdog.ts";

if (!process.env.GENGATE_TEST_SYSTEM_TMPDIR) {
  const system = tmpdir();
  const run = mkdtempSync(join(system, "gengate-test-run-"));
  process.env.GENGATE_TEST_SYSTEM_TMPDIR = system;
  process.env.TMPDIR = run;
  whenGone(`rm -rf ${shellQuote(run)}`);
}
