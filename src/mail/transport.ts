import type { Transporter } from "nodemailer";
import type { SmtpSettings } from "../config/schema.ts";
import { importEntry } from "../lib/entries.ts";
import type { MailMessage } from "./outbox.ts";

/** How the sender hands a message to the mail server. Injectable (tests count or fail sends). */
export interface MailTransport {
  /** Resolves when the server accepted the message; rejects with a MailSendError otherwise. */
  send(from: string, to: string[], message: MailMessage): Promise<void>;
  close(): void;
}

/** A refusal the sender should not retry: a 5xx answer to the recipients or to the message itself. */
export class MailSendError extends Error {
  override name = "MailSendError";
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export interface SmtpTransportOptions {
  /** Extra trusted CA certificates (a private relay's PKI, tests). The system store is used otherwise. */
  ca?: string | Buffer;
  /** Connect, greeting and socket idle limits. Default 15 s, 15 s and 30 s. */
  timeoutMs?: number;
}

/**
 * nodemailer over SMTP. tls "tls": TLS from the first byte (port 465); "starttls": STARTTLS is
 * required (a server that does not offer it is an error, never a silent plain-text send); "none":
 * plain text, for a relay on the same host or network. Certificates are verified.
 *
 * nodemailer is loaded at the first send, not at start: with the Node modules it pulls in (net, tls,
 * dns, zlib) it was about 2 ms of every start and 1.5 MB of idle memory without [smtp] (issue 19).
 */
export function smtpTransport(s: SmtpSettings, options: SmtpTransportOptions = {}): MailTransport {
  const timeout = options.timeoutMs ?? 15_000;
  const create = (nodemailer: typeof import("nodemailer")["default"]) =>
    nodemailer.createTransport({
      host: s.host,
      port: s.port,
      secure: s.tls === "tls",
      requireTLS: s.tls === "starttls",
      ignoreTLS: s.tls === "none",
      ...(s.user !== null ? { auth: { user: s.user, pass: s.password ?? "" } } : {}),
      tls: { rejectUnauthorized: true, ...(options.ca ? { ca: options.ca } : {}) },
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout * 2,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  let transporter: Promise<Transporter> | null = null;
  return {
    async send(from, to, message) {
      try {
        // A failed load or set-up is not kept: the next send tries again.
        transporter ??= importEntry<typeof import("../entries/nodemailer.ts")>("nodemailer")
          .then((m) => create(m.default))
          .catch((err: unknown) => {
            transporter = null;
            throw err;
          });
        await (await transporter).sendMail({
          from,
          to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          disableFileAccess: true,
          disableUrlAccess: true,
        });
      } catch (err) {
        const e = err as { message?: string; responseCode?: number; code?: string };
        // Login, TLS and connection problems are the set-up's (fixable by the operator): retried.
        const permanent =
          typeof e.responseCode === "number" &&
          e.responseCode >= 500 &&
          e.responseCode < 600 &&
          (e.code === "EENVELOPE" || e.code === "EMESSAGE");
        throw new MailSendError(oneLine(e.message ?? String(err)), permanent);
      }
    },
    close: () =>
      void transporter?.then(
        (t) => t.close(),
        () => {},
      ),
  };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 400);
}
