import { existsSync } from "node:fs";
import { DEFAULT_DATA_DIR } from "../config/load.ts";
import { dataDirPaths, rotateServerSecret } from "../server/datadir.ts";
import { parseArgs, UsageError } from "./args.ts";

/**
 * `gengate secret rotate`: a new link-signing secret. Links signed with the previous one stay
 * valid until they expire (at most 24 h). A running server picks it up on SIGHUP.
 */
export function secretCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  const { flags, positionals } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
  if (sub !== "rotate" || positionals.length)
    throw new UsageError("usage: gengate secret rotate [--data-dir DIR]");
  const paths = dataDirPaths(flags["data-dir"] ?? process.env.GENGATE_DATA_DIR ?? DEFAULT_DATA_DIR);
  if (!existsSync(paths.serverSecret)) throw new UsageError(`no server secret at ${paths.serverSecret}`);
  rotateServerSecret(paths);
  process.stdout.write(
    flags.json
      ? `${JSON.stringify({ rotated: true })}\n`
      : "link-signing secret rotated; reload the server (SIGHUP, systemctl reload gengate) to sign with it\n",
  );
  return 0;
}
