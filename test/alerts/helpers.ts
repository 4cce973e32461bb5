import type { SmtpSettings } from "../../src/config/schema.ts";
import type { Sql } from "../../src/db/sql.ts";
import type { AppContext } from "../../src/server/context.ts";
import { WebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import { testQueueServices } from "../helpers/services.ts";
import { reserveUsd } from "../ledger/ledger-helpers.ts";
import { LOOPBACK_ALLOWED } from "../webhooks/helpers.ts";

export const USD = (n: number) => BigInt(Math.round(n * 1_000_000));

/** The services (no HTTP) with a default account of `balance` USD. */
export async function alertsApp(options: { balance?: number; smtp?: SmtpSettings | null } = {}) {
  const t = await testQueueServices();
  t.ctx.live = { ...t.ctx.live, webhooks: LOOPBACK_ALLOWED, smtp: options.smtp ?? null };
  const accountId = t.account.id;
  if (options.balance) await t.ctx.ledger.topUp(accountId, USD(options.balance), "test credit");
  const reserve = async (usd: number) => await reserveUsd(t.ctx.ledger, accountId, USD(usd));
  return { ...t, accountId, reserve };
}

export interface AlertRow {
  id: string;
  url: string;
  event: string;
  payload: string;
  status: string;
  account_id: string;
}

/** The BALANCE_LOW webhook rows, oldest first (ids are time-ordered), through the port. */
export async function alertRows(sql: Sql, accountId?: string): Promise<AlertRow[]> {
  const rows = await sql.all<AlertRow>(
    "SELECT id, url, event, payload, status, account_id FROM webhook_deliveries WHERE event = 'BALANCE_LOW' ORDER BY created_at, id",
  );
  return rows.filter((r) => accountId === undefined || r.account_id === accountId);
}

export async function mailRows(sql: Sql, kind?: string) {
  const rows = await sql.all<{
    kind: string;
    to_addrs: string;
    subject: string;
    text_body: string;
    status: string;
  }>("SELECT kind, to_addrs, subject, text_body, status FROM mail_outbox ORDER BY created_at, id");
  return rows.filter((r) => kind === undefined || r.kind === kind);
}

export async function armed(sql: Sql, accountId: string): Promise<boolean> {
  const row = await sql.get<{ a: bigint }>("SELECT alert_armed AS a FROM accounts WHERE id = ?", [accountId]);
  return row!.a === 1n;
}

/** A dispatcher over the app's outbox that delivers to loopback (tests run it by hand with runDue). */
export function testDispatcher(ctx: Pick<AppContext, "outbox" | "webhookSecrets" | "jobs" | "views">) {
  return new WebhookDispatcher({
    outbox: ctx.outbox,
    secrets: ctx.webhookSecrets,
    renderRecord: async (id) => {
      const job = await ctx.jobs.get(id);
      return job ? await ctx.views.record(job) : null;
    },
    policy: () => LOOPBACK_ALLOWED,
    schedule: [10, 10],
  });
}
