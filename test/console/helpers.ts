/**
 * In-process console tests: the real app (makeTestApp) and a small cookie-keeping "browser" that
 * posts forms the way a page does (Origin of the public URL, the session's CSRF token).
 */
import { base32Decode, hotp, totpStep } from "../../src/lib/totp.ts";
import { makeTestApp } from "../helpers/context.ts";

export const ORIGIN = "http://gengate.test";
export const PASSWORD = "correct horse battery";

export async function consoleApp(options: Parameters<typeof makeTestApp>[0] = {}) {
  const t = await makeTestApp(options);
  const people = t.ctx.people;
  const handle = (path: string, init: RequestInit = {}) =>
    t.app.handle(new Request(`http://localhost${path}`, { redirect: "manual", ...init }));
  /** A person with a password who belongs to the default account with `role`. */
  const person = async (email: string, role: "owner" | "member" = "owner", operator = false) => {
    const { url } = await people.invites.createInvite({ email, accountId: t.account.id, role, operator });
    await people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    return email;
  };
  const browser = () => new Browser(handle);
  /** A browser signed in as `email` (through the sign-in form). */
  const signedIn = async (email: string) => {
    const b = browser();
    const res = await b.post("/console/login", { email, password: PASSWORD });
    if (res.status !== 303) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
    return b;
  };
  /** Sets the live sign-up mode (as a reload would). */
  const setSignup = (signup: "closed" | "invite" | "open") => {
    t.ctx.live = { ...t.ctx.live, console: { ...t.ctx.live.console, signup } };
  };
  /** Turns two-factor on for a person; returns a function giving a valid second factor (a recovery code). */
  const enableTwoFactor = async (email: string): Promise<() => Promise<string>> => {
    const person = (await people.members.findPerson(email))!;
    const { secret } = await people.twoFactor.beginTwoFactor(person.id);
    const { recoveryCodes } = await people.twoFactor.enableTwoFactor(
      person.id,
      hotp(base32Decode(secret)!, totpStep(Date.now() / 1000)),
    );
    return async () => recoveryCodes.shift()!;
  };
  return { ...t, people, handle, person, browser, signedIn, setSignup, enableTwoFactor };
}

export class Browser {
  cookie: string | null = null;
  /** The CSRF token of the last page that had one (<meta name="csrf-token">). */
  csrf: string | null = null;

  constructor(private handle: (path: string, init?: RequestInit) => Promise<Response>) {}

  private remember(res: Response): Response {
    for (const c of res.headers.getSetCookie()) {
      const m = /^gengate_session=([^;]*)/.exec(c);
      if (!m) continue;
      this.cookie = /Max-Age=0(;|$)/.test(c) || m[1] === "" ? null : m[1]!;
    }
    return res;
  }

  private headers(extra: Record<string, string> = {}): Headers {
    const h = new Headers(extra);
    if (this.cookie) h.set("cookie", `gengate_session=${this.cookie}`);
    return h;
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.remember(await this.handle(path, { headers: this.headers(headers) }));
  }

  /** GET, keeping the page's CSRF token; returns status and text. */
  async page(path: string): Promise<{ status: number; text: string; res: Response }> {
    const res = await this.get(path);
    const text = await res.text();
    const m = /<meta name="csrf-token" content="([^"]+)">/.exec(text);
    if (m) this.csrf = m[1]!;
    return { status: res.status, text, res };
  }

  /**
   * Posts a multipart form, files included, as a browser without the script posts the studio's form:
   * Origin set (null: none), the CSRF token added when known (null: none).
   */
  async postMultipart(
    path: string,
    fields: Record<string, string | File>,
    options: { origin?: string | null; csrf?: string | null } = {},
  ): Promise<Response> {
    const body = new FormData();
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (csrf && !("csrf" in fields)) body.set("csrf", csrf);
    for (const [k, v] of Object.entries(fields)) body.set(k, v);
    const origin = options.origin === undefined ? ORIGIN : options.origin;
    const extra: Record<string, string> = origin === null ? {} : { origin };
    return this.remember(await this.handle(path, { method: "POST", body, headers: this.headers(extra) }));
  }

  /** Posts a urlencoded form as our pages do: Origin set, CSRF token added when known. */
  async post(
    path: string,
    fields: Record<string, string>,
    options: {
      origin?: string | null;
      referer?: string;
      csrf?: string | null;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Response> {
    const body = new URLSearchParams(fields);
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (csrf && !("csrf" in fields)) body.set("csrf", csrf);
    const extra: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      ...options.headers,
    };
    const origin = options.origin === undefined ? ORIGIN : options.origin;
    if (origin !== null) extra.origin = origin;
    if (options.referer) extra.referer = options.referer;
    return this.remember(
      await this.handle(path, { method: "POST", body: body.toString(), headers: this.headers(extra) }),
    );
  }
}
