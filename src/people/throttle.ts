import { hashSecret } from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import { EMAIL_MAX_LENGTH, type PeopleCore, SIGNIN_FAILED } from "./common.ts";
import type { PeopleStore } from "./store.ts";
import { type ClientInfo, SIGNIN_MAX_FAILURES, SIGNIN_WINDOW_SECONDS } from "./types.ts";

/**
 * Sign-in throttling: 10 failures per email or per client address in 15 minutes give 429
 * (`rate_limited` with Retry-After) until the oldest of them leaves the window.
 */
export class SignInThrottle {
  private readonly store: PeopleStore;
  private readonly now: () => number;

  constructor(core: PeopleCore) {
    this.store = core.store;
    this.now = core.now;
  }

  /**
   * The throttle's subjects, each at most 260 characters whatever was typed: an email no person can
   * have (over 254 characters) is counted under its SHA-256, so its repeats still add up. A 128 MiB
   * "email" used to be written whole into signin_failures (515 MiB of data dir).
   */
  subjects(email: string, client: ClientInfo | null | undefined): string[] {
    const s = [
      email.length <= EMAIL_MAX_LENGTH
        ? `email:${email}`
        : `email-sha256:${hashSecret(email).toString("hex")}`,
    ];
    if (client?.ip) s.push(`ip:${client.ip.slice(0, 64)}`);
    return s;
  }

  /** 429 while any subject (the email, the client address) has 10 failures in the window. */
  async check(subjects: string[]): Promise<void> {
    const nowMs = this.now();
    const windowMs = SIGNIN_WINDOW_SECONDS * 1000;
    let retryMs = 0;
    for (const s of subjects) {
      const f = await this.store.failures(s, nowMs - windowMs);
      if (f.count >= SIGNIN_MAX_FAILURES && f.oldestMs !== null)
        retryMs = Math.max(retryMs, f.oldestMs + windowMs - nowMs);
    }
    if (retryMs > 0) {
      const retryAfterSeconds = Math.max(1, Math.ceil(retryMs / 1000));
      throw new DomainError(
        "rate_limited",
        `Too many failed sign-ins; try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s).`,
        { retryAfterSeconds },
      );
    }
  }

  /** Counts a failure against every subject, then throws `unauthorized` (param when given). */
  async fail(subjects: string[], param?: string, message = SIGNIN_FAILED): Promise<never> {
    const nowMs = this.now();
    await this.store.recordFailure(subjects, nowMs, nowMs - SIGNIN_WINDOW_SECONDS * 1000);
    throw new DomainError("unauthorized", message, param ? { param } : {});
  }

  /** A success forgets the email's failures (the client address keeps its count). */
  async clear(subjects: string[]): Promise<void> {
    await this.store.clearFailures(subjects[0]!);
  }
}
