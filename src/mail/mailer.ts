import type { AccountStore } from "../accounts/store.ts";
import type { SmtpSettings } from "../config/schema.ts";
import type { Sql } from "../db/sql.ts";
import type { PeopleNotifier } from "../people/common.ts";
import type { MailKind, MailMessage, MailOutbox } from "./outbox.ts";
import { inviteMessage, passwordResetMessage } from "./templates.ts";

/**
 * Queues mail when [smtp] is configured, and only then: without it nothing is written and every
 * caller carries on as before (links are shown and printed). Call it with the transaction of the
 * cause, so a message exists exactly when its cause committed.
 */
export class Mailer {
  /** Set by the server once the sender runs: a queued message is sent at once. */
  wake: () => void = () => {};

  constructor(
    readonly outbox: MailOutbox,
    private readonly settings: () => SmtpSettings | null,
  ) {}

  enabled(): boolean {
    return this.settings() !== null;
  }

  /** True when the message was queued (SMTP is set and there is a recipient). */
  async queue(
    tx: Sql,
    kind: MailKind,
    to: string[],
    message: MailMessage,
    accountId: string | null = null,
  ): Promise<boolean> {
    if (!this.enabled() || to.length === 0) return false;
    // A header must stay on one line whatever an account name holds.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
    const subject = message.subject.replace(/[\u0000-\u001f\u007f]+/g, " ").slice(0, 200);
    await this.outbox.in(tx).enqueue(kind, to, { ...message, subject }, accountId);
    this.wake();
    return true;
  }
}

/**
 * The people service's mail: an invite goes to the invite's own email (an invite without one is
 * not mailed), a reset link to the person's stored email. Never to any other address.
 */
export function peopleMail(mailer: Mailer, accounts: AccountStore): PeopleNotifier {
  return {
    async invite(tx, to, invite) {
      const accountName = invite.accountId
        ? ((await accounts.in(tx).getAccount(invite.accountId))?.name ?? null)
        : null;
      return mailer.queue(
        tx,
        "invite",
        [to],
        inviteMessage({ url: invite.url, expiresAt: invite.expiresAt, accountName, role: invite.role }),
        invite.accountId,
      );
    },
    async passwordReset(tx, to, url) {
      return await mailer.queue(tx, "password_reset", [to], passwordResetMessage(url));
    },
    enabled: () => mailer.enabled(),
  };
}
