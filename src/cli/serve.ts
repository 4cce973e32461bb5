import { writeSync } from "node:fs";
import { startServer } from "../app/start.ts";
import { readConfigFile, resolveServerSettings, type ServeFlags } from "../config/load.ts";
import { storageSettingsFrom } from "../config/storage.ts";
import { flushLogs, log } from "../lib/log.ts";
import { reexecWithAllocatorTuning } from "../server/allocator.ts";
import { parseArgs } from "./args.ts";

export const SERVE_FLAGS = ["port", "host", "data-dir", "config", "public-url", "tls-cert", "tls-key"];

/** `gengate serve`: runs until SIGTERM/SIGINT; SIGHUP reloads the config file and catalog. */
export async function serveCommand(argv: string[]): Promise<number> {
  reexecWithAllocatorTuning(); // before anything is opened or printed
  const { flags, positionals } = parseArgs(argv, { values: SERVE_FLAGS });
  if (positionals.length > 0) throw new Error(`serve takes no arguments (got "${positionals[0]}")`);
  const configPath = flags.config ?? process.env.GENGATE_CONFIG ?? null;
  const file = configPath ? readConfigFile(configPath) : null;
  const settings = {
    ...resolveServerSettings(flags as ServeFlags, process.env, file, configPath),
    storage: storageSettingsFrom(process.env, file),
  };
  const running = await startServer(settings);
  const { ctx } = running;

  if (running.firstStart.adminToken || running.firstStart.defaultKey) {
    const lines = [
      `gengate: first start in ${ctx.settings.dataDir}. Store these now: they are shown only once.`,
    ];
    if (running.firstStart.adminToken)
      lines.push(`  Admin token (operator API /admin/v1): ${running.firstStart.adminToken}`);
    if (running.firstStart.defaultKey)
      lines.push(`  Default API key (account "default"):  ${running.firstStart.defaultKey}`);
    if (running.firstStart.ownerInvite)
      lines.push(
        `  Console sign-up link (one-time, 7 days; owner and operator of "default"): ${running.firstStart.ownerInvite}`,
      );
    // Same channel as the batched logs, in order: the banner must precede the "listening" line.
    flushLogs();
    writeSync(1, `${lines.join("\n")}\n`);
  }
  return await new Promise<number>((resolveExit) => {
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) {
        log("warn", "second signal: exiting now", { signal });
        process.exit(1);
      }
      stopping = true;
      log("info", "shutting down", { signal });
      running.stop().then(
        () => {
          log("info", "stopped");
          resolveExit(0);
        },
        (err) => {
          log("error", "shutdown failed", { error: String(err) });
          resolveExit(1);
        },
      );
    };
    process.on("SIGTERM", () => shutdown("SIGTERM"));
    process.on("SIGINT", () => shutdown("SIGINT"));
    process.on("SIGHUP", () => {
      const result = running.reload();
      if (result.ok) log("info", "config reloaded", { models: result.models });
      else log("error", "config reload failed; keeping the previous catalog", { error: result.error });
    });
    // Announced only once the signal handlers are in place: a supervisor (or test) that signals
    // right after seeing this line gets a clean shutdown, not the default kill.
    log("info", "listening", {
      url: running.url,
      public_url: ctx.publicUrl,
      data_dir: ctx.settings.dataDir,
      models: ctx.catalog.models.length,
      version: ctx.version,
    });
  });
}
