import { resolve } from "node:path";
import { restoreBackup } from "../backup/restore.ts";
import { DEFAULT_DATA_DIR } from "../config/load.ts";
import { parseArgs, UsageError } from "./args.ts";

/** `gengate restore ARCHIVE [--data-dir DIR]`: fills an empty or new data dir from a backup. */
export async function restoreCommand(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(argv, { values: ["data-dir"], booleans: ["json"] });
  if (positionals.length !== 1) throw new UsageError("restore needs exactly one ARCHIVE argument");
  const dataDir = flags["data-dir"] ?? process.env.GENGATE_DATA_DIR ?? DEFAULT_DATA_DIR;
  const result = await restoreBackup(resolve(positionals[0]!), dataDir);
  if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else
    process.stdout.write(
      `restored ${result.files} files (${result.bytes} bytes, backup of ${result.backup_created_at}) into ${result.data_dir}; start it with: gengate serve --data-dir ${result.data_dir}\n`,
    );
  return 0;
}
