import { requireReason } from "../admin/operations.ts";
import { setPersonDisabledByOperator } from "../admin/people.ts";
import { readConfigFile, resolveServerSettings, smtpFrom } from "../config/load.ts";
import { DomainError } from "../lib/errors.ts";
import { rfc3339 } from "../lib/time.ts";
import { dataDirPaths, readPublicUrlFile } from "../server/datadir.ts";
import { publicUrlOf } from "../server/public-url.ts";
import { parseArgs, UsageError } from "./args.ts";
import { withServices } from "./operator.ts";

const USER_USAGE = `usage: gengate user invite --email E [--account ACCOUNT_ID] [--role owner|member] [--operator]
       gengate user reset-password --email E
       gengate user disable --email E --reason TEXT
       gengate user enable --email E`;

/**
 * `gengate user invite|reset-password`: one-time console links for the operator to hand over
 * (docs/console.md). The links start with {public_url}, found as `gengate serve` finds it
 * (--public-url, GENGATE_PUBLIC_URL, the config file's server.public_url), else the one the server
 * on this data dir recorded at its last start (data dir file `public-url`), else host and port.
 */
export async function userCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "disable" || sub === "enable") return await userSwitch(sub, rest);
  if (sub !== "invite" && sub !== "reset-password") throw new UsageError(USER_USAGE);
  const { flags, positionals } = parseArgs(rest, {
    values: ["email", "account", "role", "data-dir", "config", "public-url"],
    booleans: sub === "invite" ? ["json", "operator"] : ["json"],
  });
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!flags.email) throw new UsageError(`user ${sub} needs --email E`);
  const configPath = flags.config || process.env.GENGATE_CONFIG || null;
  const file = configPath ? readConfigFile(configPath) : null;
  const settings = resolveServerSettings(
    { "data-dir": flags["data-dir"], "public-url": flags["public-url"] },
    process.env,
    file,
    configPath,
  );
  // With [smtp] the link is also queued for mail; the running server sends it (docs/billing.md "Email").
  const smtp = smtpFrom(file, process.env);
  const services = { smtp: () => smtp, database: settings.database };
  // Configured (flag, env, file) first; else the address the server on this data dir last started
  // at (its real port, not the default 8080); else host and port as `gengate serve` would use them.
  const publicUrl =
    settings.publicUrl ||
    readPublicUrlFile(dataDirPaths(settings.dataDir)) ||
    publicUrlOf(settings, settings.port);
  const json = flags.json === "true";

  if (sub === "invite") {
    const role = flags.role;
    if (role !== undefined && role !== "owner" && role !== "member")
      throw new UsageError(`--role must be owner or member (got "${role}")`);
    if (role !== undefined && !flags.account) throw new UsageError("--role needs --account ACCOUNT_ID");
    const invite = await withServices(
      settings.dataDir,
      async (s) =>
        await s.people.invites.createInvite({
          email: flags.email,
          accountId: flags.account ?? null,
          role,
          operator: flags.operator === "true",
        }),
      publicUrl,
      services,
    );
    const what = flags.account ? `to join ${flags.account} as ${role ?? "member"}` : "to create an account";
    process.stdout.write(
      json
        ? `${JSON.stringify({ url: invite.url, ...(invite.mailed ? { mailed: true } : {}) })}\n`
        : `Invite for ${flags.email.trim().toLowerCase()} ${what}${flags.operator === "true" ? " (operator)" : ""}; one-time, until ${rfc3339(invite.expiresAt)}:\n${invite.url}\n${mailedLine(invite.mailed)}`,
    );
    return 0;
  }

  const reset = await withServices(
    settings.dataDir,
    async (s) => await s.people.resets.requestPasswordReset(flags.email!),
    publicUrl,
    services,
  );
  // The operator may know whether the email exists: an unknown one is an error here (not in the console).
  if (!reset) throw new DomainError("not_found", `no person with email ${flags.email.trim().toLowerCase()}`);
  process.stdout.write(
    json
      ? `${JSON.stringify({ url: reset.url, ...(reset.mailed ? { mailed: true } : {}) })}\n`
      : `Password reset link (one-time, 1 hour):\n${reset.url}\n${mailedLine(reset.mailed)}`,
  );
  return 0;
}

function mailedLine(mailed: boolean): string {
  return mailed ? "Also queued for email ([smtp]); the running server sends it.\n" : "";
}

/**
 * `gengate user disable --email E --reason TEXT` / `enable --email E`: the admin API's
 * setPersonDisabledByOperator. A disabled person cannot sign in and their sessions end at once.
 */
async function userSwitch(sub: "disable" | "enable", rest: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(rest, {
    values: ["email", "reason", "data-dir"],
    booleans: ["json"],
  });
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!flags.email || (sub === "disable" && flags.reason === undefined)) throw new UsageError(USER_USAGE);
  const email = flags.email.trim().toLowerCase();
  const reason = sub === "disable" ? requireReason(flags.reason, "Disabling a person") : null;
  const person = await withServices(flags["data-dir"], async (s) => {
    const found = await s.people.members.findPerson(email);
    if (!found) throw new DomainError("not_found", `no person with email ${email}`);
    return await setPersonDisabledByOperator(s, found.id, reason === null ? null : { reason });
  });
  process.stdout.write(
    flags.json === "true"
      ? `${JSON.stringify(person)}\n`
      : person.disabled_at
        ? `${person.email} disabled since ${person.disabled_at}: cannot sign in; every session ended\n`
        : `${person.email} enabled: may sign in again\n`,
  );
  return 0;
}
