import { existsSync } from "node:fs";
import { DEFAULT_DATA_DIR, databaseSettings } from "../config/load.ts";
import { openBus } from "../db/bus.ts";
import { CacheInvalidation } from "../db/invalidation.ts";
import { openSql } from "../db/open-sql.ts";
import { dataDirPaths, replaceAdminTokenFile, rotateServerSecret } from "../server/datadir.ts";
import { replaceSharedAdminToken, rotateSharedLinkSecret } from "../server/shared-secrets.ts";
import { parseArgs, UsageError } from "./args.ts";

const USAGE = "usage: gengate secret rotate|admin-token [--data-dir DIR] [--json]";

/**
 * `gengate secret rotate`: a new link-signing secret. Links signed with the previous one stay
 * valid until they expire (at most 24 h). `gengate secret admin-token`: a new admin token, printed
 * once; the old one stops working. SQLite: the data dir's files; a running server picks them up on
 * SIGHUP. PostgreSQL: the shared_secrets rows; every instance picks them up within 1 s.
 */
export async function secretCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { flags, positionals } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
  if ((sub !== "rotate" && sub !== "admin-token") || positionals.length) throw new UsageError(USAGE);
  const database = databaseSettings(process.env, null);
  const print = (value: object, human: string) =>
    process.stdout.write(flags.json ? `${JSON.stringify(value)}\n` : `${human}\n`);
  if (database.kind === "postgres") {
    const opened = await openSql(database, "");
    const bus = openBus(database, opened.sql);
    try {
      const invalidation = new CacheInvalidation(opened.sql, bus);
      if (sub === "rotate") {
        await rotateSharedLinkSecret(opened.sql, invalidation);
        print({ rotated: true }, "link-signing secret rotated; every instance signs with it within a second");
      } else {
        const token = await replaceSharedAdminToken(opened.sql, invalidation);
        print(
          { admin_token: token },
          `new admin token (shown once; the old one stops working within a second): ${token}`,
        );
      }
    } finally {
      await bus.close();
      await opened.close();
    }
    return 0;
  }
  const paths = dataDirPaths(flags["data-dir"] ?? process.env.GENGATE_DATA_DIR ?? DEFAULT_DATA_DIR);
  if (!existsSync(paths.serverSecret)) throw new UsageError(`no server secret at ${paths.serverSecret}`);
  if (sub === "rotate") {
    rotateServerSecret(paths);
    print(
      { rotated: true },
      "link-signing secret rotated; reload the server (SIGHUP, systemctl reload gengate) to sign with it",
    );
  } else {
    const token = replaceAdminTokenFile(paths);
    print(
      { admin_token: token },
      `new admin token in ${paths.adminToken}: ${token}\nreload the server (SIGHUP, systemctl reload gengate) to use it`,
    );
  }
  return 0;
}
