import { resolve } from "node:path";
import { createBackup } from "../backup/create.ts";
import { isGzipName } from "../backup/manifest.ts";
import { DEFAULT_DATA_DIR } from "../config/load.ts";
import { parseArgs, UsageError } from "./args.ts";

/**
 * `gengate backup FILE`: one archive of the database, the file store and the secrets, consistent
 * while the server runs (src/backup/create.ts). gzip-compressed when FILE ends in .gz or .tgz.
 */
export async function backupCommand(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(argv, { values: ["data-dir"], booleans: ["json"] });
  if (positionals.length !== 1) throw new UsageError("backup needs exactly one FILE argument");
  const target = resolve(positionals[0]!);
  const dataDir = flags["data-dir"] ?? process.env.GENGATE_DATA_DIR ?? DEFAULT_DATA_DIR;
  const result = await createBackup(dataDir, target, { gzip: isGzipName(target) });
  for (const d of result.dropped) {
    if (d.reason !== "deleted")
      process.stderr.write(
        `gengate: warning: ${d.path} is ${d.reason} in the data dir though the database references it; left out of the backup\n`,
      );
  }
  if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else
    process.stdout.write(
      `backup written to ${result.backup}: ${result.files} files, ${result.bytes} bytes (${result.archive_bytes} in the archive) in ${result.duration_ms} ms\n`,
    );
  return 0;
}
