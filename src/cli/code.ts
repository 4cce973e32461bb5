import { type BatchView, MAX_BATCH_SIZE } from "../codes/service.ts";
import { DomainError } from "../lib/errors.ts";
import { formatMicro } from "../lib/money.ts";
import { parseArgs, UsageError } from "./args.ts";
import { withServices } from "./operator.ts";

const CODE_USAGE = `usage: gengate code create --amount AMOUNT --currency USD|RUB [--count N (1-${MAX_BATCH_SIZE})] [--expires DATE] [--note TEXT]
       gengate code list
       gengate code revoke BATCH_ID
  (DATE: YYYY-MM-DD, valid through that day UTC, or an RFC 3339 time)`;

function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

/** One batch on one line: id, amount, counts, expiry, note. */
function batchLine(b: BatchView): string {
  const expiry = b.expires_at ? `expires ${b.expires_at}` : "no expiry";
  const note = b.note ? `  ${JSON.stringify(b.note)}` : "";
  return `${b.id}  ${formatMicro(BigInt(b.amount_micro))} ${b.currency} x ${b.count}  redeemed ${b.redeemed}, unused ${b.unused}, expired ${b.expired}, revoked ${b.revoked}  ${expiry}${note}`;
}

/**
 * `gengate code create|list|revoke`: redeem code batches on the data dir, through the same
 * CodeService as the admin API and the console (docs/billing.md, "Redeem codes").
 */
export async function codeCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "create") {
    const { flags, positionals } = parseArgs(rest, {
      values: ["amount", "currency", "count", "expires", "note", "data-dir"],
      booleans: ["json"],
    });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (!flags.amount) throw new UsageError("code create needs --amount AMOUNT");
    if (!flags.currency) throw new UsageError("code create needs --currency USD|RUB");
    const made = await withServices(flags["data-dir"], async (s) => {
      try {
        return await s.codes.createBatchFrom({
          amount: flags.amount!,
          currency: flags.currency!,
          count: flags.count,
          expires: flags.expires,
          note: flags.note,
        });
      } catch (err) {
        // A bad flag value is a usage error (exit 2), named by its flag.
        if (err instanceof DomainError && err.code === "validation_error")
          throw new UsageError(`--${err.param === "expires_at" ? "expires" : err.param}: ${err.message}`);
        throw err;
      }
    });
    const b = made.batch;
    print(
      flags.json === "true",
      { codes: made.codes, batch_id: b.id, batch: b },
      `${made.codes.join("\n")}\n${made.codes.length} code(s) of ${formatMicro(BigInt(b.amount_micro))} ${b.currency}, batch ${b.id}${b.expires_at ? `, expiring at ${b.expires_at}` : ""}. Shown once: only their hashes are stored.`,
    );
    return 0;
  }
  if (sub === "list") {
    const { flags, positionals } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const data = await withServices(
      flags["data-dir"],
      async (s) => await s.codes.listBatches(MAX_BATCH_SIZE),
    );
    print(flags.json === "true", { data }, data.length ? data.map(batchLine).join("\n") : "no code batches");
    return 0;
  }
  if (sub === "revoke") {
    const { flags, positionals } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
    if (positionals.length !== 1) throw new UsageError("usage: gengate code revoke BATCH_ID");
    const r = await withServices(flags["data-dir"], async (s) => await s.codes.revokeBatch(positionals[0]!));
    print(
      flags.json === "true",
      { ...r.batch, revoked_now: r.revoked },
      `batch ${r.batch.id}: ${r.revoked} unused code(s) revoked; redeemed ${r.batch.redeemed}`,
    );
    return 0;
  }
  throw new UsageError(CODE_USAGE);
}
