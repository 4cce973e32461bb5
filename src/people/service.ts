import type { AccountStore } from "../accounts/store.ts";
import type { ConsoleSettings } from "../config/schema.ts";
import type { PeopleNotifier } from "./common.ts";
import { InviteService } from "./invites.ts";
import { MemberService } from "./members.ts";
import { type PasswordCost, Passwords } from "./passwords.ts";
import { ResetService } from "./resets.ts";
import { SessionService } from "./sessions.ts";
import { SignInService } from "./sign-in.ts";
import { PeopleStore } from "./store.ts";
import { SignInThrottle } from "./throttle.ts";
import { TwoFactorService } from "./two-factor.ts";

export type { PeopleNotifier } from "./common.ts";

export interface PeopleOptions {
  publicUrl: string;
  /** The live [console] settings, read at each call (a config reload swaps them). */
  console?: () => Pick<ConsoleSettings, "signup" | "currency">;
  /** Clock, epoch ms (tests move it). */
  now?: () => number;
  /** argon2id cost; tests lower it. Default: Bun's (64 MiB, t = 2). */
  passwordCost?: PasswordCost;
  /** Mails invite and reset links when [smtp] is set (src/mail/); default: nothing is mailed. */
  notify?: PeopleNotifier;
}

/**
 * The console's people, one service per concern over one PeopleStore (docs/architecture.md,
 * "people/"): `ctx.people.signIn.signIn(...)`, `ctx.people.invites.createInvite(...)`, ...
 */
export interface People {
  store: PeopleStore;
  /** Sign-in, sign-up, accepting an invite (src/people/sign-in.ts, throttled by throttle.ts). */
  signIn: SignInService;
  sessions: SessionService;
  invites: InviteService;
  /** Password resets and changes. */
  resets: ResetService;
  twoFactor: TwoFactorService;
  /** Memberships, roles, the operator's list of people. */
  members: MemberService;
}

/** The people services over one database, each given only what it uses. */
export function createPeople(
  db: ConstructorParameters<typeof PeopleStore>[0],
  accounts: AccountStore,
  options: PeopleOptions,
): People {
  const store = new PeopleStore(db);
  const core = { store, now: options.now ?? Date.now };
  const console = options.console ?? (() => ({ signup: "invite" as const, currency: "USD" as const }));
  const notify = options.notify ?? null;
  const passwords = new Passwords(options.passwordCost ?? null);
  const sessions = new SessionService(core);
  const invites = new InviteService({ ...core, accounts, publicUrl: options.publicUrl, console, notify });
  const twoFactor = new TwoFactorService({ ...core, passwords });
  const throttle = new SignInThrottle(core);
  const signIn = new SignInService({
    ...core,
    accounts,
    console,
    passwords,
    throttle,
    sessions,
    invites,
    twoFactor,
  });
  const resets = new ResetService({ ...core, publicUrl: options.publicUrl, passwords, notify });
  const members = new MemberService(core);
  return {
    store,
    signIn,
    sessions,
    invites,
    resets,
    twoFactor,
    members,
  };
}
