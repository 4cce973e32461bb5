import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

export const SMTP_CERT = readFileSync(join(import.meta.dir, "../mail/fixtures/smtp.test.crt"), "utf8");
const SMTP_KEY = readFileSync(join(import.meta.dir, "../mail/fixtures/smtp.test.key"), "utf8");

export interface CapturedMail {
  from: string;
  to: string[];
  /** The raw message as received. */
  raw: string;
  /** Subject header (unfolded). */
  subject: string;
  /** The raw message with quoted-printable soft breaks and escapes undone (links are whole). */
  decoded: string;
  /** Whether the session was encrypted (TLS or STARTTLS). */
  secure: boolean;
  user: string | null;
}

export interface SmtpCaptureOptions {
  /** "tls": TLS from the first byte; "starttls": offers STARTTLS; "none": plain only. Default "none". */
  tls?: "none" | "starttls" | "tls";
  /** Require AUTH with this user and password. */
  auth?: { user: string; pass: string };
  /** Decide the answer to each message (1-based): null accepts; else an SMTP code and text. */
  answer?: (n: number) => { code: number; message: string } | null;
  port?: number;
}

function decodeQuotedPrintable(text: string): string {
  return text
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** A local SMTP server on 127.0.0.1 (port 0 unless given) that keeps every message it accepts. */
export async function smtpCapture(options: SmtpCaptureOptions = {}) {
  const mails: CapturedMail[] = [];
  let n = 0;
  const tls = options.tls ?? "none";
  const config: SMTPServerOptions = {
    secure: tls === "tls",
    key: SMTP_KEY,
    cert: SMTP_CERT,
    disabledCommands: tls === "starttls" ? [] : ["STARTTLS"],
    authOptional: !options.auth,
    // AUTH over plain text is allowed only when the test says so (tls none + auth).
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass)
        return cb(null, { user: auth.username });
      return cb(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        n += 1;
        const verdict = options.answer?.(n) ?? null;
        if (verdict) return cb(Object.assign(new Error(verdict.message), { responseCode: verdict.code }));
        const raw = Buffer.concat(chunks).toString("utf8");
        const head = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, " ");
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject: /^Subject: (.*)$/m.exec(head)?.[1]?.trim() ?? "",
          decoded: decodeQuotedPrintable(raw),
          secure: session.secure,
          user: (session.user as string | undefined) ?? null,
        });
        cb();
      });
    },
  };
  const server = new SMTPServer(config);
  server.on("error", () => {});
  const port = await new Promise<number>((resolve) => {
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      resolve((server.server.address() as { port: number }).port);
    });
  });
  return {
    mails,
    port,
    /** Messages offered so far (accepted or refused). */
    offered: () => n,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
export type SmtpCapture = Awaited<ReturnType<typeof smtpCapture>>;

/** The [smtp] settings (resolved) for a capture server. */
export function smtpSettingsFor(
  port: number,
  tls: "none" | "starttls" | "tls" = "none",
  auth: { user: string; pass: string } | null = null,
) {
  return {
    host: "127.0.0.1",
    port,
    tls,
    user: auth?.user ?? null,
    password: auth?.pass ?? null,
    from: "gengate <billing@gengate.test>",
  };
}
