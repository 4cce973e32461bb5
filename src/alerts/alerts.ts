import type { Currency } from "../accounts/store.ts";
import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import type { BalanceWatcher, MovedRow } from "../ledger/ledger.ts";
import { DomainError } from "../lib/errors.ts";
import { newTimeOrderedId } from "../lib/ids.ts";
import type { Mailer } from "../mail/mailer.ts";
import { balanceLowMessage } from "../mail/templates.ts";
import type { WebhookOutbox } from "../webhooks/outbox.ts";

/** The webhook body of a low-balance alert (docs/billing.md "Low-balance alerts"). Money: micro-units as strings. */
export interface BalanceLowPayload {
  event: "BALANCE_LOW";
  account_id: string;
  currency: Currency;
  balance_micro: string;
  held_micro: string;
  available_micro: string;
  threshold_micro: string;
  /** RFC 3339 UTC, milliseconds: when the movement that crossed the threshold committed. */
  time: string;
}

export interface LowBalanceAlertsDeps {
  webhooks: WebhookOutbox;
  mailer: Mailer;
  /** Emails of the account's owners (the alert's recipients). */
  owners: (tx: Sql, accountId: string) => Promise<string[]>;
  /** {public_url}/console/billing, named in the email. */
  billingUrl: string;
  /** Clock, epoch ms. */
  now?: () => number;
}

interface Disarmed {
  name: string;
  currency: Currency;
  alert_url: string | null;
}

/**
 * The low-balance alert, told of every movement of an account with a threshold by the ledger,
 * inside the movement's transaction (Ledger.balanceWatcher). The rule:
 * - a movement that leaves available (balance - held) below the threshold while the alert is
 *   armed disarms it and queues ONE webhook (the alert URL, if set) and ONE email to the owners
 *   (if [smtp] is set), in that transaction;
 * - only a credit (top-up, redeem code, payment, positive adjustment) that leaves available at or
 *   above the threshold re-arms it (and a threshold change: AccountStore.setAlertThreshold), so a
 *   reservation and its release (a failed job) never alert twice.
 * The common case (armed and above, or disarmed and below) runs no statement at all.
 */
export class LowBalanceAlerts extends SqlStore implements BalanceWatcher {
  /** Set by the server once the webhook dispatcher runs: a queued alert is sent at once. */
  wakeWebhooks: () => void = () => {};
  private readonly now: () => number;

  protected override s = {
    disarm: this.q<Disarmed, [string]>(
      "UPDATE accounts SET alert_armed = 0 WHERE id = ? AND alert_armed = 1 RETURNING name, currency, alert_url",
    ),
    arm: this.q<null, [string]>("UPDATE accounts SET alert_armed = 1 WHERE id = ? AND alert_armed = 0"),
    setUrl: this.q<null, [string | null, string]>("UPDATE accounts SET alert_url = ? WHERE id = ?"),
  };

  constructor(
    sql: Sql,
    private readonly deps: LowBalanceAlertsDeps,
  ) {
    super(sql);
    this.now = deps.now ?? Date.now;
  }

  async moved(tx: Sql, accountId: string, after: MovedRow, credit: boolean): Promise<void> {
    const threshold = after.alert_threshold_micro;
    if (threshold === null) return;
    const available = after.balance_micro - after.held_micro;
    if (available < threshold) {
      if (after.alert_armed === 1n) await this.in(tx).fire(accountId, after, threshold);
    } else if (credit && after.alert_armed === 0n) {
      await this.s.arm.on(tx).run(accountId);
    }
  }

  /** Sets (or clears, with null) the alert URL. The caller has checked it with the webhook URL policy. */
  async setUrl(accountId: string, url: string | null): Promise<void> {
    if ((await this.s.setUrl.run(url, accountId)).changes === 0)
      throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
  }

  private async fire(accountId: string, after: MovedRow, threshold: bigint): Promise<void> {
    const account = await this.s.disarm.get(accountId);
    if (!account) return; // disarmed already (by a concurrent movement of this transaction's past)
    const now = this.now();
    const payload: BalanceLowPayload = {
      event: "BALANCE_LOW",
      account_id: accountId,
      currency: account.currency,
      balance_micro: after.balance_micro.toString(),
      held_micro: after.held_micro.toString(),
      available_micro: (after.balance_micro - after.held_micro).toString(),
      threshold_micro: threshold.toString(),
      time: new Date(now).toISOString(),
    };
    if (account.alert_url) {
      await this.deps.webhooks.in(this.sql).enqueueAccountEvent({
        id: `msg_${newTimeOrderedId("alert", now)}`,
        accountId,
        url: account.alert_url,
        event: "BALANCE_LOW",
        payload: JSON.stringify(payload),
      });
      this.wakeWebhooks();
    }
    if (this.deps.mailer.enabled()) {
      await this.deps.mailer.queue(
        this.sql,
        "balance_low",
        await this.deps.owners(this.sql, accountId),
        balanceLowMessage({
          accountName: account.name,
          accountId,
          currency: account.currency,
          balanceMicro: after.balance_micro,
          heldMicro: after.held_micro,
          thresholdMicro: threshold,
          billingUrl: this.deps.billingUrl,
        }),
        accountId,
      );
    }
  }
}
