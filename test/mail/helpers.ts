import { migrate, openDatabase } from "../../src/db/database.ts";
import { MailOutbox } from "../../src/mail/outbox.ts";
import { MailSender, type MailSenderDeps } from "../../src/mail/sender.ts";
import { smtpTransport } from "../../src/mail/transport.ts";
import { sqlOf } from "../helpers/sql.ts";
import "../helpers/context.ts"; // captures log lines instead of printing them
import { SMTP_CERT } from "../helpers/smtp.ts";

export const MESSAGE = {
  subject: "Hello",
  text: "Plain body https://gengate.test/x",
  html: "<p>HTML body</p>",
};

/** An outbox over a fresh database and a sender for `settings` trusting the test certificate. */
export function mailFixture(deps: Partial<MailSenderDeps> & Pick<MailSenderDeps, "settings">) {
  const db = openDatabase(":memory:");
  migrate(db);
  let now = Date.UTC(2026, 0, 15, 12, 0, 0);
  const outbox = new MailOutbox(sqlOf(db), { now: () => now });
  const sender = new MailSender({
    outbox,
    now: () => now,
    transportFor: (s) => smtpTransport(s, { ca: SMTP_CERT, timeoutMs: 3000 }),
    ...deps,
  });
  const row = (id: string) =>
    db
      .query<
        { status: string; attempts: bigint; last_error: string | null; text_body: string; html_body: string },
        [string]
      >("SELECT status, attempts, last_error, text_body, html_body FROM mail_outbox WHERE id = ?")
      .get(id)!;
  return {
    db,
    sql: sqlOf(db),
    outbox,
    sender,
    row,
    clock: {
      advance(ms: number) {
        now += ms;
      },
      now: () => now,
    },
  };
}

/** A sender over an in-process app's outbox and its live [smtp] (tests run it with runDue). */
export function appSender(ctx: {
  mailer: { outbox: MailOutbox };
  live: { smtp: import("../../src/config/schema.ts").SmtpSettings | null };
}) {
  return new MailSender({
    outbox: ctx.mailer.outbox,
    settings: () => ctx.live.smtp,
    transportFor: (s) => smtpTransport(s, { ca: SMTP_CERT, timeoutMs: 3000 }),
  });
}
