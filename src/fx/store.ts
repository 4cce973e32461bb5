import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import { nowSeconds, rfc3339 } from "../lib/time.ts";

/** Account currencies other than USD, each with an operator-set USD rate. */
export const FX_CURRENCIES = ["RUB"] as const;
export type FxCurrency = (typeof FX_CURRENCIES)[number];

export interface FxRate {
  currency: FxCurrency;
  rate_micro: bigint;
  source: string;
  updated_at: bigint;
}

/**
 * The USD->currency rates, in micro-units of the currency per 1 USD. Only new reservations read
 * them: every hold stores the rate it was made at (see Ledger.reserve).
 */
export class FxStore extends SqlStore {
  constructor(sql: Sql) {
    super(sql);
  }

  async get(currency: FxCurrency): Promise<FxRate | null> {
    return await this.q<FxRate, [string]>("SELECT * FROM fx_rates WHERE currency = ?").get(currency);
  }

  async list(): Promise<FxRate[]> {
    return await this.q<FxRate, []>("SELECT * FROM fx_rates ORDER BY currency").all();
  }

  async set(currency: FxCurrency, rateMicro: bigint, source: string): Promise<FxRate> {
    await this.q(
      `INSERT INTO fx_rates (currency, rate_micro, source, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (currency) DO UPDATE SET rate_micro = ?2, source = ?3, updated_at = ?4`,
    ).run(currency, rateMicro, source, nowSeconds());
    return (await this.get(currency))!;
  }
}

export function isFxCurrency(value: string): value is FxCurrency {
  return (FX_CURRENCIES as readonly string[]).includes(value);
}

export function fxView(r: FxRate) {
  return {
    currency: r.currency,
    rate_micro: r.rate_micro.toString(),
    source: r.source,
    updated_at: rfc3339(r.updated_at),
  };
}
