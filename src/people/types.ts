/**
 * The people domain's contract with the console's HTTP layer (src/console/). The services that
 * implement it live in src/people/ (createPeople in service.ts); pages and middleware only use these shapes.
 * Money and keys stay in their own domains (accounts/, ledger/): a person acts on an account
 * through a membership, never through an API key.
 */

export type Role = "owner" | "member";
export type SignupMode = "closed" | "invite" | "open";

/** A signed-in person as every console request sees them (resolved from the session cookie). */
export interface ConsoleSession {
  /** The session row's id (shown in the sessions list; never the cookie token). */
  sessionId: string;
  personId: string;
  email: string;
  operator: boolean;
  /** The account the person is looking at, and their role in it; null: they belong to none. */
  accountId: string | null;
  role: Role | null;
  /** Per-session CSRF token: every state-changing console request must carry it. */
  csrfToken: string;
  /** Whether two-factor is on for this person. */
  twoFactor: boolean;
}

/** The cookie value handed to the browser once, at sign-in (only its SHA-256 is stored). */
export interface NewSession {
  token: string;
  session: ConsoleSession;
  /** Absolute expiry (epoch seconds), for the cookie's Max-Age. */
  expiresAt: number;
}

/** Where a request came from, for throttling and the sessions list. */
export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

/** Session lifetimes (docs/console.md "People and sign-in"): idle 12 h, absolute 30 days. */
export const SESSION_IDLE_SECONDS = 12 * 3600;
export const SESSION_ABSOLUTE_SECONDS = 30 * 24 * 3600;
export const SESSION_COOKIE = "gengate_session";
export const PASSWORD_MIN_LENGTH = 10;
/** Sign-in throttling: this many failures per email or per client address in the window give 429. */
export const SIGNIN_MAX_FAILURES = 10;
export const SIGNIN_WINDOW_SECONDS = 15 * 60;
export const INVITE_TTL_SECONDS = 7 * 24 * 3600;
export const RESET_TTL_SECONDS = 3600;
