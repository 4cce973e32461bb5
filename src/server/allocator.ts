import { COMPILED } from "../lib/entries.ts";

/**
 * Memory returned to the OS promptly. Bun allocates through mimalloc, which keeps freed pages for
 * 100 ms before purging them. Under a steady stream of short jobs (eight workers rendering media,
 * 32 clients waiting on /run) that held 60 MB of freed pages resident: the end-to-end bench
 * peaked at 172-186 MB, and at 115-126 MB with a 2 ms delay, for the same throughput (see
 * docs/performance.md). mimalloc reads its options from the environment once, when the process
 * starts, so `serve` re-executes itself once with the option set: same PID, same arguments, same
 * descriptors. An operator's own MIMALLOC_PURGE_DELAY (any value) is left alone.
 */
export const PURGE_DELAY_MS = "2";

export function reexecWithAllocatorTuning(): void {
  const env = process.env;
  if (env.MIMALLOC_PURGE_DELAY !== undefined || typeof process.execve !== "function") return;
  // A compiled binary reports its embedded entry (/$bunfs/...) as argv[1]; from sources, argv[1]
  // is the script and execArgv holds bun's own flags (--smol, ...).
  const args = COMPILED ? process.argv.slice(2) : [...process.execArgv, ...process.argv.slice(1)];
  hideExecveWarning();
  try {
    process.execve(process.execPath, [process.execPath, ...args], {
      ...env,
      MIMALLOC_PURGE_DELAY: PURGE_DELAY_MS,
    });
  } catch {
    // Not fatal: the server runs, with mimalloc's default purge delay.
  }
}

type WarningListener = (warning: Error) => void;

/**
 * process.execve announces itself as experimental on stderr, a tick after it is called. When it
 * replaces the process the announcement never prints; when it fails (a foreign binary under
 * qemu-user, a sandbox that refuses exec) it would be the first line of the operator's terminal.
 * The printers of warnings are set aside until that one warning has passed; any other warning is
 * handed to them meanwhile, so nothing else is lost.
 */
export function hideExecveWarning(): void {
  const printers = process.listeners("warning") as WarningListener[];
  process.removeAllListeners("warning");
  const filter: WarningListener = (warning) => {
    if (warning.name === "ExperimentalWarning" && warning.message.includes("execve")) {
      process.removeListener("warning", filter);
      for (const p of printers) process.on("warning", p);
    } else for (const p of printers) p(warning);
  };
  process.on("warning", filter);
}
