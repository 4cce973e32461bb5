import { spawn } from "node:child_process";
import { tmpdir } from "node:os";

/**
 * Runs a shell command once this test process is gone, however it ends (a normal end, a SIGKILL,
 * a Ctrl-C): bun test fires neither "exit" nor "beforeExit", so a watchdog in its own session
 * polls the process and then runs `command`.
 */
export function whenGone(command: string): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; ${command}`;
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore" }).unref();
}

/** A value quoted for `sh`. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The system's temporary directory, outside the run's own (test/preload.ts): for what another
 * watchdog must stop before its files go (the PostgreSQL cluster).
 */
export function systemTmpdir(): string {
  return process.env.GENGATE_TEST_SYSTEM_TMPDIR ?? tmpdir();
}
