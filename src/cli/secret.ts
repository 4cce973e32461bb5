import { existsSync } from "node:fs";
import { DEFAULT_DATA_DIR, databaseSettings } from "../config/load.ts";
import { openBus } from "../db/bus.ts";
import { CacheInvalidation } from "../db/invalidation.ts";
import { openSql } from "../db/open-sql.ts";
import { dataDirPaths, rotateServerSecret } from "../server/datadir.ts";
import { rotateSharedLinkSecret } from "../server/shared-secrets.ts";
import { parseArgs, UsageError } from "./args.ts";

/**
 * `gengate secret rotate`: a new link-signing secret. Links signed with the previous one stay
 * valid until they expire (at most 24 h). SQLite: the data dir's files; a running server picks it
 * up on SIGHUP. PostgreSQL: the shared_secrets rows; every instance picks it up within 1 s.
 */
export async function secretCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { flags, positionals } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
  if (sub !== "rotate" || positionals.length)
    throw new UsageError("usage: gengate secret rotate [--data-dir DIR]");
  const database = databaseSettings(process.env, null);
  if (database.kind === "postgres") {
    const opened = await openSql(database, "");
    const bus = openBus(database, opened.sql);
    try {
      await rotateSharedLinkSecret(opened.sql, new CacheInvalidation(opened.sql, bus));
    } finally {
      await bus.close();
      await opened.close();
    }
    process.stdout.write(
      flags.json
        ? `${JSON.stringify({ rotated: true })}\n`
        : "link-signing secret rotated; every instance signs with it within a second\n",
    );
    return 0;
  }
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
