import type { Database } from "bun:sqlite";
import { AccountStore } from "../accounts/accounts.ts";
import { FxStore } from "../fx/rates.ts";
import { Ledger } from "../ledger/ledger.ts";
import { Wallet } from "../ledger/wallet.ts";

/** The domain services over one database, shared by the server, the CLI and tests. */
export function createServices(db: Database, publicUrl: string, now?: () => number) {
  return {
    accounts: new AccountStore(db),
    ledger: new Ledger(db, { billingUrl: `${publicUrl}/console/billing`, now }),
    fx: new FxStore(db),
    wallet: new Wallet(db),
  };
}
export type Services = ReturnType<typeof createServices>;
