/**
 * The part of the PeopleService (src/people/service.ts, CONSOLE-PLAN.md) the console shell calls,
 * written as an interface so the shell compiles on its own. `ctx.people` is the real service and
 * satisfies it structurally (the methods that hash a password are async there, hence `Awaitable`).
 * Page modules use `kit.people`.
 */
import type { ClientInfo, ConsoleSession, NewSession, Role } from "../people/types.ts";
import type { AppContext } from "../server/context.ts";

type Awaitable<T> = T | Promise<T>;

export interface ConsolePeople {
  resolveSession(token: string, client?: ClientInfo): ConsoleSession | null;
  signIn(
    input: { email: string; password: string; code?: string | null },
    client: ClientInfo,
  ): Awaitable<NewSession>;
  signOut(sessionId: string): void;
  switchAccount(sessionId: string, personId: string, accountId: string): ConsoleSession;
  signUp(
    input: { email: string; password: string; invite?: string | null },
    client: ClientInfo,
  ): Awaitable<{ session: NewSession; accountId: string; keyId: string; key: string }>;
  inviteInfo(
    token: string,
  ): { email: string | null; accountName: string | null; role: Role; personExists: boolean } | null;
  /** `email` only for an invite made without one (the first-start owner invite). */
  acceptInvite(
    token: string,
    password: string,
    client: ClientInfo,
    email?: string | null,
  ): Awaitable<{ session: NewSession; key: string | null; keyId: string | null }>;
  resetLinkValid(token: string): boolean;
  resetPassword(token: string, password: string): Awaitable<void>;
  accountsOf(personId: string): { accountId: string; name: string; currency: string; role: Role }[];
}

/** The people service of an app context. */
export function peopleOf(ctx: AppContext): ConsolePeople {
  const people = (ctx as AppContext & { people?: ConsolePeople }).people;
  if (!people) throw new Error("the people service is not wired into the app context (ctx.people)");
  return people;
}
