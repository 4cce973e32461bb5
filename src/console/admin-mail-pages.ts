/**
 * The operator's mail page (/console/admin/mail): whether [smtp] is configured (never the
 * password), how many messages are pending, sent and failed, and the latest messages with their
 * attempts and last error, so a mail server that refuses or is down is seen here (the links
 * themselves are shown where they were made and printed by the CLI; bodies are not kept).
 */
import { Elysia } from "elysia";
import { html } from "../lib/html.ts";
import type { MailView } from "../mail/outbox.ts";
import { adminPage } from "./admin-view.ts";
import { formatTime } from "./format.ts";
import { type ConsoleKit, requireOperator } from "./kit.ts";

const RECENT = 50;

const KIND_LABEL: Record<MailView["kind"], string> = {
  invite: "invite",
  password_reset: "password reset",
  balance_low: "low-balance alert",
};

export function adminMailPages(kit: ConsoleKit) {
  return new Elysia().get(
    "/console/admin/mail",
    kit.page(async (c) => {
      requireOperator(c.session);
      const smtp = kit.ctx.live.smtp;
      const counts = await kit.ctx.mailer.outbox.counts();
      const rows = await kit.ctx.mailer.outbox.recent(RECENT);
      const setup = smtp
        ? html`<p>Mail goes through <span class="mono">${smtp.host}:${smtp.port}</span> (${smtp.tls === "none" ? "no encryption" : smtp.tls === "tls" ? "TLS" : "STARTTLS"}${smtp.user ? html`, as <span class="mono">${smtp.user}</span>` : null}) from <span class="mono">${smtp.from}</span>.</p>`
        : html`<p class="notice warn" role="status">No <code>[smtp]</code> section is configured: nothing is mailed.
Invite and password-reset links are shown on the page that makes them and printed by
<code>gengate user</code>; hand them over yourself. Low-balance alerts go to alert URLs only.</p>`;
      const failed =
        counts.failed > 0
          ? html`<p class="notice error" role="alert">${counts.failed} ${counts.failed === 1 ? "message was" : "messages were"} given up (see Last error below). A failed invite or reset link can be made again on the People page.</p>`
          : null;
      const table = rows.length
        ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Queued</th><th scope="col">Kind</th><th scope="col">To</th><th scope="col">Subject</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last error</th></tr></thead>
<tbody>${rows.map(
            (m) => html`<tr>
  <td>${formatTime(m.createdAt, "ms")}</td>
  <td>${KIND_LABEL[m.kind]}</td>
  <td class="wrap">${m.to.join(", ")}</td>
  <td class="wrap">${m.subject}</td>
  <td>${m.status}${m.status === "sent" && m.sentAt !== null ? html` <span class="hint">${formatTime(m.sentAt, "ms")}</span>` : null}${m.status === "pending" && m.attempts > 0 ? html` <span class="hint">next try ${formatTime(m.nextAttemptAt, "ms")}</span>` : null}</td>
  <td>${m.attempts}</td>
  <td class="wrap">${m.lastError ?? "—"}</td>
</tr>`,
          )}</tbody></table></div>`
        : html`<p>No messages yet.</p>`;
      return adminPage(
        c,
        "Mail",
        "/console/admin/mail",
        html`<h1>Mail</h1>
${setup}
${failed}
<p>Pending ${counts.pending}, sent ${counts.sent}, failed ${counts.failed}. A message is retried after
30 s, 2 min, 10 min, 30 min, 1 h, 3 h and 6 h, then given up; a permanent refusal (a 5xx answer) gives
up at once. Finished messages are kept 30 days, without their text.</p>
<h2>Latest messages</h2>
${table}`,
      );
    }),
  );
}
