import { BackupError } from "../backup/create.ts";
import { RestoreError } from "../backup/restore.ts";
import { CatalogError } from "../catalog/catalog.ts";
import {
  BackendNotReadyError,
  ConfigError,
  databaseSettings,
  refuseUnconvertedBackend,
} from "../config/load.ts";
import { SchemaTooNewError } from "../db/database.ts";
import { DomainError } from "../lib/errors.ts";
import { VERSION } from "../server/version.ts";
import { UsageError } from "./args.ts";
import { backupCommand } from "./backup.ts";
import { codeCommand } from "./code.ts";
import { migrateDataCommand } from "./migrate-data.ts";
import { accountCommand, fxCommand, keyCommand } from "./operator.ts";
import { orderCommand } from "./order.ts";
import { restoreCommand } from "./restore.ts";
import { secretCommand } from "./secret.ts";
import { serveCommand } from "./serve.ts";
import { userCommand } from "./user.ts";

const USAGE = `gengate ${VERSION}: prepaid gateway for generation models

Usage:
  gengate serve [--port N] [--host H] [--data-dir DIR] [--config FILE] [--public-url URL]
                [--tls-cert FILE --tls-key FILE]   (serve HTTPS with these PEM files)
  gengate account create --name NAME [--currency USD|RUB] [--credit AMOUNT]
  gengate account credit ACCOUNT_ID AMOUNT [--reason TEXT]
  gengate account adjust ACCOUNT_ID AMOUNT --reason TEXT   (signed; never below what jobs hold)
  gengate account list
  gengate account show ACCOUNT_ID      (balance, this month's spend and keys)
  gengate account disable ACCOUNT_ID --reason TEXT   (its keys 401, its sessions end; enable to undo)
  gengate account enable ACCOUNT_ID
  gengate key create --account ACCOUNT_ID [--name N] [--monthly-limit AMOUNT] [--manage]
                  [--expires TIME] [--models ID,PREFIX*,...] [--cidrs CIDR,...]
  gengate key update KEY_ID [--name N] [--monthly-limit AMOUNT|none] [--expires TIME|never]
                  [--models LIST|all] [--cidrs LIST|anywhere] [--disable | --enable]
  gengate key list --account ACCOUNT_ID
  gengate key revoke KEY_ID            (any key, the last manage key included; refused at once)
  gengate fx set RUB RATE
  gengate code create --amount AMOUNT --currency USD|RUB [--count N] [--expires DATE] [--note TEXT]
                                       (redeem codes, printed once; DATE: YYYY-MM-DD or RFC 3339)
  gengate code list                    (batches with redeemed/unused/expired/revoked counts)
  gengate code revoke BATCH_ID         (its unused codes stop working)
  gengate order list [--status S] [--provider stripe|yookassa] [--account ACCOUNT_ID]
  gengate order refund ORDER_ID [--amount AMOUNT] --reason TEXT
                                       (records a refund of a paid top-up: a negative adjustment)
  gengate user invite --email E [--account ACCOUNT_ID] [--role owner|member] [--operator]
                                       (one-time console link, 7 days; no --account: a new account)
  gengate user reset-password --email E   (one-time password reset link, 1 hour)
  gengate user disable --email E --reason TEXT   (cannot sign in; every session ends)
  gengate user enable --email E
  gengate secret rotate                (new link-signing secret; old links stay valid until they expire)
  gengate secret admin-token           (new admin token, printed once; the old one stops working)
  gengate backup FILE                  (database, files and secrets in one tar; .tar.gz/.tgz: gzip)
  gengate restore ARCHIVE              (into an empty or new --data-dir)
  gengate migrate-data --to postgres://user@host/db [--storage s3://bucket/prefix] [--dry-run]
                       [--verify-only] [--data-dir DIR] [--config FILE] [--json]
                                       (copies a stopped data dir into an empty PostgreSQL database
                                       and bucket, then verifies; exit 3: refused, nothing written)
  (operator commands take --data-dir DIR and --json; they work while the server runs)
  (AMOUNT is a decimal in the account currency, e.g. 12.50; the API's fields are *_micro integers)
  gengate version
  gengate help

Environment: GENGATE_PORT, GENGATE_HOST, GENGATE_DATA_DIR, GENGATE_CONFIG, GENGATE_PUBLIC_URL,
GENGATE_TLS_CERT, GENGATE_TLS_KEY.
Docs: README.md and docs/ in the source tree; /docs and /v1/llms.txt on a running server.`;

/** Dispatches a command line; returns the exit code. Errors are one line on stderr. */
export async function runCli(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    // Backup and restore copy the SQLite file: on PostgreSQL use the database's own tools
    // (docs/scale-out.md). migrate-data reads the data dir's SQLite file and names its target with
    // --to. Every other command runs on the database GENGATE_DATABASE_URL names.
    if (command === "backup" || command === "restore")
      refuseUnconvertedBackend(databaseSettings(process.env, null));
    switch (command) {
      case "serve":
        return await serveCommand(rest);
      case "backup":
        return await backupCommand(rest);
      case "restore":
        return await restoreCommand(rest);
      case "migrate-data":
        return await migrateDataCommand(rest);
      case "account":
        return await accountCommand(rest);
      case "key":
        return await keyCommand(rest);
      case "fx":
        return await fxCommand(rest);
      case "code":
        return await codeCommand(rest);
      case "order":
        return await orderCommand(rest);
      case "user":
        return await userCommand(rest);
      case "secret":
        return await secretCommand(rest);
      case "version":
      case "--version":
        process.stdout.write(`gengate ${VERSION}\n`);
        return 0;
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}" (try: gengate help)`);
    }
  } catch (err) {
    const known =
      err instanceof UsageError ||
      err instanceof ConfigError ||
      err instanceof SchemaTooNewError ||
      err instanceof DomainError ||
      err instanceof CatalogError ||
      err instanceof BackupError ||
      err instanceof RestoreError;
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`gengate: ${message}\n`);
    if (!known && process.env.GENGATE_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return err instanceof UsageError || err instanceof BackendNotReadyError ? 2 : 1;
  }
}
