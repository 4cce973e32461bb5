import { resolve } from "node:path";
import { restoreBackup } from "../backup/restore.ts";
import { DEFAULT_DATA_DIR, readConfigFile } from "../config/load.ts";
import { storageSettingsFrom } from "../config/storage.ts";
import { openBlobBackend } from "../files/open-blob-backend.ts";
import { parseArgs, UsageError } from "./args.ts";

/**
 * `gengate restore ARCHIVE [--data-dir DIR] [--config FILE]`: fills an empty or new data dir from a
 * backup; the files go where `storage_url` (environment or config file) says: the data dir, or an
 * empty S3 bucket prefix.
 */
export async function restoreCommand(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(argv, { values: ["data-dir", "config"], booleans: ["json"] });
  if (positionals.length !== 1) throw new UsageError("restore needs exactly one ARCHIVE argument");
  const dataDir = flags["data-dir"] ?? process.env.GENGATE_DATA_DIR ?? DEFAULT_DATA_DIR;
  const configPath = flags.config ?? process.env.GENGATE_CONFIG ?? null;
  const storage = storageSettingsFrom(process.env, configPath ? readConfigFile(configPath) : null);
  const result = await restoreBackup(resolve(positionals[0]!), dataDir, {
    blobs: openBlobBackend(storage, dataDir),
  });
  if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else
    process.stdout.write(
      `restored ${result.files} files (${result.bytes} bytes, backup of ${result.backup_created_at}) into ${result.data_dir}; start it with: gengate serve --data-dir ${result.data_dir}\n`,
    );
  return 0;
}
