import { existsSync } from "node:fs";
import { type KeyControlsInput, keyControlsOf } from "../accounts/key-controls.ts";
import type { Currency } from "../accounts/store.ts";
import {
  adjustAccount,
  createAccountWithKey,
  createKeyFor,
  creditAccount,
  disableAccount,
  enableAccount,
  listAccountKeys,
  requireAccount,
  requireReason,
  revokeKeyAsOperator,
  setFxRate,
  showAccount,
  updateKeyAsOperator,
} from "../admin/operations.ts";
import { createServices, type ServicesOptions } from "../app/services.ts";
import { DEFAULT_DATA_DIR, databaseSettings } from "../config/load.ts";
import type { DatabaseSettings } from "../config/schema.ts";
import { openBus } from "../db/bus.ts";
import { CacheInvalidation } from "../db/invalidation.ts";
import { openSql } from "../db/open-sql.ts";
import { isFxCurrency } from "../fx/store.ts";
import { formatMicro, parseDecimalToMicro } from "../lib/money.ts";
import type { Services } from "../server/context.ts";
import { dataDirPaths } from "../server/datadir.ts";
import { parseArgs, UsageError } from "./args.ts";

/**
 * Operator commands on the database directly (the data dir's SQLite file, or the PostgreSQL
 * database GENGATE_DATABASE_URL names). Safe while the server runs: SQLite in WAL mode with a busy
 * timeout and every write an IMMEDIATE transaction, as in the server; PostgreSQL's own concurrency.
 */
export async function withServices<T>(
  dataDirFlag: string | undefined,
  fn: (s: Services) => T | Promise<T>,
  publicUrl = process.env.GENGATE_PUBLIC_URL ?? "",
  options: ServicesOptions & { database?: DatabaseSettings } = {},
): Promise<T> {
  const database = options.database ?? databaseSettings(process.env, null);
  const paths = dataDirPaths(dataDirFlag ?? process.env.GENGATE_DATA_DIR ?? DEFAULT_DATA_DIR);
  if (database.kind === "sqlite" && !existsSync(paths.database)) {
    throw new UsageError(`no database at ${paths.database}; start the server once, or pass --data-dir`);
  }
  const opened = await openSql(database, paths.database);
  // Key changes bump scope "keys" and announce it (not started: the CLI only changes things), so
  // every running instance drops its cached keys within 1 s (docs/scale-out.md "Across instances").
  const bus = openBus(database, opened.sql);
  try {
    const invalidation = new CacheInvalidation(opened.sql, bus);
    return await fn(createServices(opened.sql, publicUrl, undefined, { invalidation, ...options }));
  } finally {
    await bus.close();
    await opened.close();
  }
}

function amountArg(text: string | undefined, what: string): bigint {
  const v = text === undefined ? null : parseDecimalToMicro(text);
  if (v === null || v === 0n)
    throw new UsageError(`${what} must be a decimal above 0 with at most 6 places, e.g. 12.50`);
  return v;
}

function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

/** `gengate account create|credit|list` */
export async function accountCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "create") {
    const { flags, positionals } = parseArgs(rest, {
      values: ["name", "currency", "credit", "data-dir"],
      booleans: ["json"],
    });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (!flags.name) throw new UsageError("account create needs --name NAME");
    const currency = (flags.currency ?? "USD").toUpperCase();
    if (currency !== "USD" && currency !== "RUB")
      throw new UsageError(`--currency must be USD or RUB (got "${flags.currency}")`);
    const credit = flags.credit === undefined ? null : amountArg(flags.credit, "--credit");
    const r = await withServices(
      flags["data-dir"],
      async (s) =>
        await createAccountWithKey(s, {
          name: flags.name!,
          currency: currency as Currency,
          creditMicro: credit,
        }),
    );
    print(
      flags.json === "true",
      { account_id: r.account.id, key: r.key, key_id: r.key_id },
      `account ${r.account.id} (${r.account.name}, ${r.account.currency}), balance ${formatMicro(BigInt(r.account.balance_micro))}\nDefault key (shown once): ${r.key}`,
    );
    return 0;
  }
  if (sub === "credit") {
    const { flags, positionals } = parseArgs(rest, { values: ["reason", "data-dir"], booleans: ["json"] });
    if (positionals.length !== 2)
      throw new UsageError("usage: gengate account credit ACCOUNT_ID AMOUNT [--reason TEXT]");
    const [id, amountText] = positionals as [string, string];
    const amount = amountArg(amountText, "AMOUNT");
    const a = await withServices(flags["data-dir"], async (s) => {
      await requireAccount(s, id);
      // The public form (docs/api.md "Command line") has no --reason; the entry still records one,
      // naming where it came from.
      return creditAccount(s, id, amount, flags.reason ?? "credit from the CLI");
    });
    print(
      flags.json === "true",
      a,
      `account ${a.id}: balance ${formatMicro(BigInt(a.balance_micro))} ${a.currency}`,
    );
    return 0;
  }
  if (sub === "adjust") {
    const { flags, positionals } = parseArgs(rest, { values: ["reason", "data-dir"], booleans: ["json"] });
    if (positionals.length !== 2 || flags.reason === undefined)
      throw new UsageError(
        "usage: gengate account adjust ACCOUNT_ID AMOUNT --reason TEXT (AMOUNT signed, e.g. -5)",
      );
    const [id, amountText] = positionals as [string, string];
    const delta = parseDecimalToMicro(amountText, { allowNegative: true });
    if (delta === null || delta === 0n)
      throw new UsageError(
        "AMOUNT must be a signed decimal other than 0 with at most 6 places, e.g. -5 or 2.50",
      );
    const reason = requireReason(flags.reason);
    const a = await withServices(flags["data-dir"], async (s) => {
      await requireAccount(s, id);
      return adjustAccount(s, id, delta, reason);
    });
    print(
      flags.json === "true",
      a,
      `account ${a.id}: balance ${formatMicro(BigInt(a.balance_micro))} ${a.currency}`,
    );
    return 0;
  }
  if (sub === "list") {
    const { flags } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
    const rows = await withServices(
      flags["data-dir"],
      async (s) => await s.accounts.listAccounts(1000, null),
    );
    const data = rows.map((a) => ({
      id: a.id,
      name: a.name,
      currency: a.currency,
      balance_micro: a.balance_micro.toString(),
      held_micro: a.held_micro.toString(),
    }));
    print(
      flags.json === "true",
      { data },
      data
        .map((a) => `${a.id}  ${a.name}  ${a.currency}  ${formatMicro(BigInt(a.balance_micro))}`)
        .join("\n"),
    );
    return 0;
  }
  if (sub === "show") {
    const { flags, positionals } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
    if (positionals.length !== 1) throw new UsageError("usage: gengate account show ACCOUNT_ID");
    const a = await withServices(flags["data-dir"], async (s) => await showAccount(s, positionals[0]!));
    const m = (v: string) => `${formatMicro(BigInt(v))} ${a.currency}`;
    print(
      flags.json === "true",
      a,
      [
        `account ${a.id} (${a.name}, ${a.currency}), created ${a.created_at}`,
        `balance ${m(a.balance_micro)}, held ${m(a.held_micro)}, available ${m(a.available_micro)}`,
        `spent in ${a.month}: ${m(a.month_spent_micro)}`,
        `keys:`,
        ...a.keys.map((k) => `  ${keyLine(k, a.currency)}`),
      ].join("\n"),
    );
    return 0;
  }
  if (sub === "disable" || sub === "enable") return await accountSwitch(sub, rest);
  throw new UsageError("usage: gengate account create|credit|adjust|list|show|disable|enable ...");
}

/**
 * `gengate account disable ACCOUNT_ID --reason TEXT` / `enable ACCOUNT_ID`: the admin API's
 * disableAccount / enableAccount; running servers refuse the account's keys within 1 s (the key
 * change is announced like `key revoke`'s).
 */
async function accountSwitch(sub: "disable" | "enable", rest: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(rest, { values: ["reason", "data-dir"], booleans: ["json"] });
  if (positionals.length !== 1 || (sub === "disable" && flags.reason === undefined))
    throw new UsageError(
      sub === "disable"
        ? "usage: gengate account disable ACCOUNT_ID --reason TEXT"
        : "usage: gengate account enable ACCOUNT_ID",
    );
  const id = positionals[0]!;
  const reason = sub === "disable" ? requireReason(flags.reason, "Disabling an account") : null;
  const a = await withServices(flags["data-dir"], async (s) =>
    reason === null ? await enableAccount(s, id) : await disableAccount(s, id, reason),
  );
  print(
    flags.json === "true",
    a,
    a.disabled_at
      ? `account ${a.id} (${a.name}) disabled since ${a.disabled_at}: its keys are refused (401) and its sessions ended`
      : `account ${a.id} (${a.name}) enabled: its keys work again`,
  );
  return 0;
}

type KeyView = Awaited<ReturnType<typeof listAccountKeys>>[number];

/** One key on one line: id, name, prefix, rights, limit, state. */
function keyLine(k: KeyView, currency: string): string {
  const limit =
    k.monthly_limit_micro === null
      ? "no monthly limit"
      : `monthly limit ${formatMicro(BigInt(k.monthly_limit_micro))} ${currency}`;
  const state = k.revoked_at ? `revoked ${k.revoked_at}` : k.disabled ? "disabled" : "active";
  const controls = [
    k.expires_at ? `expires ${k.expires_at}` : null,
    k.allowed_models ? `models ${k.allowed_models.join(",")}` : null,
    k.allowed_cidrs ? `from ${k.allowed_cidrs.join(",")}` : null,
  ].filter((c) => c !== null);
  return [k.id, k.name, `${k.prefix}...`, k.can_manage ? "manage" : "use", limit, state, ...controls].join(
    "  ",
  );
}

const KEY_CONTROLS_USAGE = "[--expires TIME] [--models ID,PREFIX*,...] [--cidrs CIDR,...]";
const KEY_USAGE = `usage: gengate key create --account ACCOUNT_ID [--name N] [--monthly-limit AMOUNT] [--manage] ${KEY_CONTROLS_USAGE}
       gengate key update KEY_ID [--name N] [--monthly-limit AMOUNT|none] [--expires TIME|never]
                  [--models LIST|all] [--cidrs LIST|anywhere] [--disable | --enable]
       gengate key list --account ACCOUNT_ID
       gengate key revoke KEY_ID`;

/** A comma-separated flag: undefined when absent, null when it is `none` (no limit), else its entries. */
function listFlag(value: string | undefined, none: string): string[] | null | undefined {
  if (value === undefined) return undefined;
  if (value === none) return null;
  return value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
}

/** The key-control flags as the API's fields (key-controls.ts checks them as it checks the API's). */
function controlFlags(flags: Record<string, string | undefined>): KeyControlsInput {
  const expires = flags.expires;
  return {
    expires_at: expires === undefined ? undefined : expires === "never" ? null : expires,
    allowed_models: listFlag(flags.models, "all"),
    allowed_cidrs: listFlag(flags.cidrs, "anywhere"),
  };
}

const CONTROL_FLAGS = ["expires", "models", "cidrs"];

/** `gengate key update KEY_ID ...`: any account's key, as PATCH /admin/v1/keys/{id}. */
async function keyUpdate(rest: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(rest, {
    values: ["name", "monthly-limit", "data-dir", ...CONTROL_FLAGS],
    booleans: ["json", "disable", "enable"],
  });
  if (positionals.length !== 1) throw new UsageError(KEY_USAGE);
  if (flags.disable === "true" && flags.enable === "true")
    throw new UsageError("--disable and --enable cannot both be given");
  const limit = flags["monthly-limit"];
  const controls = keyControlsOf(controlFlags(flags));
  const { k, currency } = await withServices(flags["data-dir"], async (s) => {
    const k = await updateKeyAsOperator(s, positionals[0]!, {
      name: flags.name,
      monthlyLimitMicro:
        limit === undefined ? undefined : limit === "none" ? null : amountArg(limit, "--monthly-limit"),
      disabled: flags.disable === "true" ? true : flags.enable === "true" ? false : undefined,
      ...controls,
    });
    return { k, currency: (await s.accounts.getAccount(k.account_id))!.currency };
  });
  print(flags.json === "true", k, `updated: ${keyLine(k, currency)}`);
  return 0;
}

/** `gengate key create|list|revoke` */
export async function keyCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "create") return keyCreate(rest);
  if (sub === "update") return keyUpdate(rest);
  if (sub === "list") {
    const { flags, positionals } = parseArgs(rest, { values: ["account", "data-dir"], booleans: ["json"] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (!flags.account) throw new UsageError("key list needs --account ACCOUNT_ID");
    const { keys, currency } = await withServices(flags["data-dir"], async (s) => ({
      keys: await listAccountKeys(s, flags.account!),
      currency: (await s.accounts.getAccount(flags.account!))!.currency,
    }));
    print(flags.json === "true", { data: keys }, keys.map((k) => keyLine(k, currency)).join("\n"));
    return 0;
  }
  if (sub === "revoke") {
    const { flags, positionals } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
    if (positionals.length !== 1) throw new UsageError("usage: gengate key revoke KEY_ID");
    const k = await withServices(
      flags["data-dir"],
      async (s) => await revokeKeyAsOperator(s, positionals[0]!),
    );
    print(
      flags.json === "true",
      k,
      `key ${k.id} (${k.name}) of account ${k.account_id} revoked at ${k.revoked_at}; requests with it are refused (401)`,
    );
    return 0;
  }
  throw new UsageError(KEY_USAGE);
}

/**
 * `gengate key create --account ID [--name N] [--monthly-limit AMOUNT] [--manage]`. AMOUNT is a
 * decimal in the account currency, like every CLI amount; the API's field is monthly_limit_micro.
 */
async function keyCreate(rest: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(rest, {
    values: ["account", "name", "monthly-limit", "data-dir", ...CONTROL_FLAGS],
    booleans: ["json", "manage"],
  });
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!flags.account) throw new UsageError("key create needs --account ACCOUNT_ID");
  const limit =
    flags["monthly-limit"] === undefined ? null : amountArg(flags["monthly-limit"], "--monthly-limit");
  // Checked before the database is opened: a typo is refused whatever the account.
  const controls = keyControlsOf(controlFlags(flags));
  const k = await withServices(flags["data-dir"], async (s) => {
    await requireAccount(s, flags.account!);
    return createKeyFor(s, flags.account!, {
      name: flags.name,
      monthlyLimitMicro: limit,
      canManage: flags.manage === "true",
      ...controls,
    });
  });
  print(
    flags.json === "true",
    {
      key_id: k.key_id,
      key: k.key,
      monthly_limit_micro: k.monthly_limit_micro,
      can_manage: k.can_manage,
      expires_at: k.expires_at,
      allowed_models: k.allowed_models,
      allowed_cidrs: k.allowed_cidrs,
    },
    `key ${k.key_id} (${k.name}) (shown once): ${k.key}`,
  );
  return 0;
}

/** `gengate fx set RUB RATE` */
export async function fxCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { flags, positionals } = parseArgs(rest, { values: ["data-dir"], booleans: ["json"] });
  if (sub !== "set" || positionals.length !== 2)
    throw new UsageError("usage: gengate fx set RUB RATE (RUB per 1 USD, e.g. 92.5)");
  const [currency, rate] = positionals as [string, string];
  const cur = currency.toUpperCase();
  if (!isFxCurrency(cur)) throw new UsageError(`currency must be RUB (got "${currency}")`);
  const r = await withServices(flags["data-dir"], async (s) => await setFxRate(s, cur, rate, "cli"));
  print(flags.json === "true", r, `USD->${r.currency} rate set to ${formatMicro(BigInt(r.rate_micro))}`);
  return 0;
}
