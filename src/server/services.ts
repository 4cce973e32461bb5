import type { Database } from "bun:sqlite";
import { AccountStore } from "../accounts/accounts.ts";
import type { ConsoleSettings, PaymentSettings } from "../config/schema.ts";
import { FxStore } from "../fx/rates.ts";
import { Ledger } from "../ledger/ledger.ts";
import { Wallet } from "../ledger/wallet.ts";
import { DISABLED_PAYMENTS, PaymentService } from "../payments/service.ts";
import { PeopleService, type PeopleServiceOptions } from "../people/service.ts";

export interface ServicesOptions {
  /** The live [console] settings (sign-up mode, currency), read at each call; default invite/USD. */
  console?: () => Pick<ConsoleSettings, "signup" | "currency">;
  passwordCost?: PeopleServiceOptions["passwordCost"];
  /** The live [payments] settings, read at each call; default: no provider enabled (the CLI). */
  payments?: () => PaymentSettings;
}

/** The domain services over one database, shared by the server, the CLI and tests. */
export function createServices(
  db: Database,
  publicUrl: string,
  now?: () => number,
  options: ServicesOptions = {},
) {
  const accounts = new AccountStore(db);
  const ledger = new Ledger(db, { billingUrl: `${publicUrl}/console/billing`, now });
  return {
    accounts,
    ledger,
    payments: new PaymentService(db, accounts, ledger, {
      publicUrl,
      settings: options.payments ?? (() => DISABLED_PAYMENTS),
      now,
    }),
    fx: new FxStore(db),
    wallet: new Wallet(db),
    people: new PeopleService(db, accounts, {
      publicUrl,
      // `now` is epoch seconds (the ledger's clock); the people service counts milliseconds.
      now: now ? () => now() * 1000 : undefined,
      console: options.console,
      passwordCost: options.passwordCost,
    }),
  };
}
export type Services = ReturnType<typeof createServices>;
