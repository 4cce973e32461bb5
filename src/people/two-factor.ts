import { hashSecret } from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import { newTotpSecret, otpauthUrl, verifyTotp } from "../lib/totp.ts";
import {
  newRecoveryCode,
  normalizeRecoveryCode,
  type PeopleCore,
  PeopleServiceBase,
  RECOVERY_CODE_COUNT,
} from "./common.ts";
import type { Passwords } from "./passwords.ts";
import type { PersonRow } from "./store.ts";

const TOTP_ISSUER = "gengate";

export interface TwoFactorDeps extends PeopleCore {
  passwords: Passwords;
}

/** Two-factor sign-in: a TOTP secret set up and confirmed, 10 recovery codes, each code used once. */
export class TwoFactorService extends PeopleServiceBase {
  private readonly passwords: Passwords;

  constructor(deps: TwoFactorDeps) {
    super(deps);
    this.passwords = deps.passwords;
  }

  /** A new pending secret (replacing any pending one); two-factor is on once enableTwoFactor confirms it. */
  async beginTwoFactor(personId: string): Promise<{ secret: string; otpauthUrl: string }> {
    const person = await this.requirePerson(personId);
    if (person.totp_enabled_at !== null)
      throw new DomainError("conflict", "Two-factor sign-in is already on; turn it off first.");
    // A set-up already begun keeps its secret until confirmed or cancelled: leaving the page and
    // pressing Set up again must not invalidate the account the person already added to their app.
    const secret = person.totp_secret ?? newTotpSecret();
    if (person.totp_secret === null) await this.store.setTotpSecret(personId, secret);
    return { secret, otpauthUrl: otpauthUrl(secret, person.email, TOTP_ISSUER) };
  }

  /** Drops a set-up begun and not confirmed (nothing to do when none is pending, or two-factor is on). */
  async cancelTwoFactor(personId: string): Promise<void> {
    const person = await this.requirePerson(personId);
    if (person.totp_enabled_at === null && person.totp_secret !== null)
      await this.store.setTotpSecret(personId, null);
  }

  /** The secret begun by beginTwoFactor and not yet confirmed (to show the set-up again), or null. */
  async pendingTwoFactor(personId: string): Promise<{ secret: string; otpauthUrl: string } | null> {
    const person = await this.requirePerson(personId);
    if (!person.totp_secret || person.totp_enabled_at !== null) return null;
    return {
      secret: person.totp_secret,
      otpauthUrl: otpauthUrl(person.totp_secret, person.email, TOTP_ISSUER),
    };
  }

  /** Confirms the pending secret with a code; returns 10 one-time recovery codes (shown once). */
  async enableTwoFactor(personId: string, code: string): Promise<{ recoveryCodes: string[] }> {
    return await this.atomic(async (self) => {
      const person = await self.requirePerson(personId);
      if (person.totp_enabled_at !== null)
        throw new DomainError("conflict", "Two-factor sign-in is already on.");
      if (!person.totp_secret)
        throw new DomainError("conflict", "Start two-factor set-up first.", { param: "code" });
      const step = verifyTotp(person.totp_secret, String(code ?? ""), self.seconds());
      if (step === null)
        throw new DomainError("validation_error", "The code is incorrect; check the time on your device.", {
          param: "code",
        });
      await self.store.enableTotp(personId, self.seconds(), step);
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
      await self.store.replaceRecoveryCodes(
        personId,
        codes.map((c) => hashSecret(normalizeRecoveryCode(c))),
      );
      return { recoveryCodes: codes };
    });
  }

  /** Turns two-factor off (the password is required); the secret and recovery codes are deleted. */
  async disableTwoFactor(personId: string, password: string): Promise<void> {
    const person = await this.requirePerson(personId);
    if (!(await this.passwords.verify(String(password ?? ""), person.password_hash)))
      throw new DomainError("unauthorized", "The password is incorrect.", { param: "password" });
    await this.atomic(async (self) => {
      await self.store.setTotpSecret(personId, null);
      await self.store.replaceRecoveryCodes(personId, []);
    });
  }

  /** A sign-in's second factor: a TOTP code (each step once) or an unused recovery code. */
  async checkCode(person: PersonRow, code: string): Promise<boolean> {
    if (/^\d{6}$/.test(code.replace(/\s/g, ""))) {
      if (!person.totp_secret) return false;
      const step = verifyTotp(
        person.totp_secret,
        code,
        this.seconds(),
        person.totp_last_step === null ? null : Number(person.totp_last_step),
      );
      return step !== null && (await this.store.useTotpStep(person.id, step));
    }
    const clean = normalizeRecoveryCode(code);
    if (!/^[A-Z2-7]{10}$/.test(clean)) return false;
    return await this.store.useRecoveryCode(person.id, hashSecret(clean), this.seconds());
  }
}
