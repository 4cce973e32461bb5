import { resolve } from "node:path";
import { createBackup } from "../backup/create.ts";
import { isGzipName } from "../backup/manifest.ts";
import { DEFAULT_DATA_DIR, readConfigFile } from "../config/load.ts";
import { storageSettingsFrom } from "../config/storage.ts";
import { openBlobBackend } from "../files/open-blob-backend.ts";
import { parseArgs, UsageError } from "./args.ts";

/**
 * `gengate backup FILE`: one archive of the database, the file store and the secrets, consistent
 * while the server runs (src/backup/create.ts). gzip-compressed when FILE ends in .gz or .tgz.
 * The files are read from where the server keeps them: `storage_url` from the environment or the
 * config file (--config, GENGATE_CONFIG), else the data dir.
 */
export async function backupCommand(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(argv, { values: ["data-dir", "config"], booleans: ["json"] });
  if (positionals.length !== 1) throw new UsageError("backup needs exactly one FILE argument");
  const target = resolve(positionals[0]!);
  const dataDir = flags["data-dir"] ?? process.env.GENGATE_DATA_DIR ?? DEFAULT_DATA_DIR;
  const configPath = flags.config ?? process.env.GENGATE_CONFIG ?? null;
  const storage = storageSettingsFrom(process.env, configPath ? readConfigFile(configPath) : null);
  const result = await createBackup(dataDir, target, {
    gzip: isGzipName(target),
    blobs: openBlobBackend(storage, dataDir),
  });
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
