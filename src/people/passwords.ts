import { DomainError } from "../lib/errors.ts";
import { newToken } from "./common.ts";
import { PASSWORD_MIN_LENGTH } from "./types.ts";

/** Longest password accepted (argon2 takes any length; this bounds the work a request can ask for). */
export const PASSWORD_MAX_LENGTH = 1024;

/** argon2id cost; tests lower it. Default: Bun's (64 MiB, t = 2). */
export type PasswordCost = { memoryCost: number; timeCost: number };

/**
 * Hashing and checking passwords, shared by sign-in, resets and two-factor. Both are async:
 * argon2id takes a few hundred ms at Bun's default cost, and Bun runs it off the event loop.
 */
export class Passwords {
  private dummyHash: Promise<string> | null = null;

  constructor(private readonly cost: PasswordCost | null = null) {}

  hash(password: string): Promise<string> {
    return Bun.password.hash(password, { algorithm: "argon2id", ...(this.cost ?? {}) });
  }

  /** Verifies against the person's hash, or a dummy hash of the same cost when there is none. */
  async verify(password: string, hash: string | null): Promise<boolean> {
    if (password.length > PASSWORD_MAX_LENGTH) return false;
    if (hash === null) {
      this.dummyHash ??= this.hash(newToken());
      await Bun.password.verify(password, await this.dummyHash);
      return false;
    }
    return Bun.password.verify(password, hash);
  }

  /** `validation_error` on `param` unless the new password has 10 to 1024 characters. */
  checkNew(password: string, param = "password"): void {
    if (typeof password !== "string" || password.length < PASSWORD_MIN_LENGTH)
      throw new DomainError(
        "validation_error",
        `The password must have at least ${PASSWORD_MIN_LENGTH} characters.`,
        {
          param,
        },
      );
    if (password.length > PASSWORD_MAX_LENGTH)
      throw new DomainError(
        "validation_error",
        `The password must have at most ${PASSWORD_MAX_LENGTH} characters.`,
        {
          param,
        },
      );
  }
}
