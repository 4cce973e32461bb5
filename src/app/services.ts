import { AccountStore } from "../accounts/store.ts";
import { LowBalanceAlerts } from "../alerts/alerts.ts";
import { CodeService } from "../codes/service.ts";
import type { ConsoleSettings, PaymentSettings, SmtpSettings } from "../config/schema.ts";
import type { CacheInvalidation } from "../db/invalidation.ts";
import type { Sql } from "../db/sql.ts";
import { FxStore } from "../fx/store.ts";
import { Ledger } from "../ledger/ledger.ts";
import { LedgerRetentionStore } from "../ledger/ledger-retention.ts";
import { MarginStore } from "../ledger/margin-store.ts";
import { Wallet } from "../ledger/wallet.ts";
import { Mailer, peopleMail } from "../mail/mailer.ts";
import { MailOutbox } from "../mail/outbox.ts";
import { DISABLED_PAYMENTS, PaymentService } from "../payments/service.ts";
import { createPeople, type PeopleOptions } from "../people/service.ts";
import type { Services } from "../server/context.ts";
import { WebhookOutbox } from "../webhooks/outbox.ts";

export interface ServicesOptions {
  /** The live [console] settings (sign-up mode, currency), read at each call; default invite/USD. */
  console?: () => Pick<ConsoleSettings, "signup" | "currency">;
  passwordCost?: PeopleOptions["passwordCost"];
  /** The live [smtp] settings, read at each use; default none (nothing is mailed). */
  smtp?: () => SmtpSettings | null;
  /** The live [payments] settings, read at each call; default: no provider enabled (the CLI). */
  payments?: () => PaymentSettings;
  /** Cross-instance cache invalidation (key changes bump scope "keys"); default none (unit tests). */
  invalidation?: CacheInvalidation | null;
}

/** The domain services over one database, shared by the server, the CLI and tests. */
export function createServices(
  sql: Sql,
  publicUrl: string,
  now?: () => number,
  options: ServicesOptions = {},
): Services {
  const accounts = new AccountStore(sql, options.invalidation ?? null);
  const billingUrl = `${publicUrl}/console/billing`;
  const ledger = new Ledger(sql, { billingUrl, now });
  // `now` is epoch seconds (the ledger's clock); the people service and alerts count milliseconds.
  const nowMs = now ? () => now() * 1000 : undefined;
  const mailer = new Mailer(new MailOutbox(sql, { now: nowMs }), options.smtp ?? (() => null));
  const people = createPeople(sql, accounts, {
    publicUrl,
    now: nowMs,
    console: options.console,
    passwordCost: options.passwordCost,
    notify: peopleMail(mailer, accounts),
  });
  // Wired here, not in the queue: operator commands move money too, and must disarm and re-arm.
  const alerts = new LowBalanceAlerts(sql, {
    webhooks: new WebhookOutbox(sql, { now: nowMs }),
    mailer,
    owners: async (tx, id) =>
      (await people.members.listMembers(id, tx)).filter((m) => m.role === "owner").map((m) => m.email),
    billingUrl,
    now: nowMs,
  });
  ledger.balanceWatcher = alerts;
  return {
    sql,
    accounts,
    ledger,
    codes: new CodeService(sql, accounts, ledger),
    payments: new PaymentService(sql, accounts, ledger, {
      publicUrl,
      settings: options.payments ?? (() => DISABLED_PAYMENTS),
      now,
    }),
    fx: new FxStore(sql),
    wallet: new Wallet(sql),
    ledgerRetention: new LedgerRetentionStore(sql),
    margins: new MarginStore(sql),
    people,
    mailer,
    alerts,
  };
}
