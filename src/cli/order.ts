import { formatMicro, parseDecimalToMicro } from "../lib/money.ts";
import { ORDER_STATUSES, type OrderStatus, orderView } from "../payments/order-store.ts";
import { isProviderName } from "../payments/service.ts";
import { parseArgs, UsageError } from "./args.ts";
import { withServices } from "./operator.ts";

const ORDER_USAGE = `usage: gengate order list [--status S] [--provider stripe|yookassa] [--account ACCOUNT_ID] [--json]
       gengate order refund ORDER_ID [--amount AMOUNT] --reason TEXT [--json]`;

type View = Awaited<ReturnType<typeof orderView>>;

function line(o: View): string {
  const m = (v: string) => `${formatMicro(BigInt(v))} ${o.currency}`;
  const refunded = o.refunded_micro !== "0" ? `, refunded ${m(o.refunded_micro)}` : "";
  return `${o.id}  ${o.created_at}  ${o.account_id}  ${o.provider}  ${o.provider_ref ?? "-"}  ${m(o.amount_micro)}  ${o.status}${refunded}`;
}

/** `gengate order list|refund` (docs/billing.md, "Reconciling with the provider's dashboard"). */
export async function orderCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "list") {
    const { flags, positionals } = parseArgs(rest, {
      values: ["status", "provider", "account", "data-dir"],
      booleans: ["json"],
    });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (flags.status && !ORDER_STATUSES.includes(flags.status as OrderStatus))
      throw new UsageError(`--status must be one of ${ORDER_STATUSES.join(", ")}`);
    if (flags.provider && !isProviderName(flags.provider))
      throw new UsageError("--provider must be stripe or yookassa");
    const data = await withServices(flags["data-dir"], async (s) =>
      (
        await s.payments.orders.list({
          limit: 10_000,
          status: (flags.status as OrderStatus | undefined) ?? null,
          provider: (flags.provider as "stripe" | "yookassa" | undefined) ?? null,
          accountId: flags.account ?? null,
        })
      ).map(orderView),
    );
    process.stdout.write(
      flags.json === "true"
        ? `${JSON.stringify({ data })}\n`
        : `${data.map(line).join("\n")}${data.length ? "\n" : ""}`,
    );
    return 0;
  }
  if (sub === "refund") {
    const { flags, positionals } = parseArgs(rest, {
      values: ["amount", "reason", "data-dir"],
      booleans: ["json"],
    });
    if (positionals.length !== 1) throw new UsageError(ORDER_USAGE);
    if (!flags.reason) throw new UsageError("order refund needs --reason TEXT");
    let amount: bigint | null = null;
    if (flags.amount !== undefined) {
      amount = parseDecimalToMicro(flags.amount);
      if (amount === null || amount === 0n)
        throw new UsageError("--amount must be a decimal above 0 with at most 6 places, e.g. 12.50");
    }
    const o = orderView(
      await withServices(
        flags["data-dir"],
        async (s) => await s.payments.refund(positionals[0]!, amount, flags.reason!),
      ),
    );
    process.stdout.write(
      flags.json === "true"
        ? `${JSON.stringify(o)}\n`
        : `order ${o.id}: refunded ${formatMicro(BigInt(o.refunded_micro))} of ${formatMicro(BigInt(o.amount_micro))} ${o.currency}; the account's balance is reduced by the refund\n`,
    );
    return 0;
  }
  throw new UsageError(ORDER_USAGE);
}
