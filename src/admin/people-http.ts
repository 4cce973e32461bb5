import { Elysia, t } from "elysia";
import { idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import {
  type AdminPeopleDeps,
  inviteByOperator,
  listInvitesPage,
  listPeoplePage,
  passwordResetByOperator,
  revokeInviteByOperator,
  setPersonDisabledByOperator,
} from "./people.ts";
import {
  ACCOUNT_ID,
  INVITE_ID,
  InviteSchema,
  MailedSchema,
  PageOf,
  PERSON_ID,
  PersonSchema,
  ReasonBody,
  RoleSchema,
} from "./schemas.ts";

const InviteBody = t.Object(
  {
    email: t.String({ minLength: 3, maxLength: 254 }),
    account_id: t.Optional(t.String({ pattern: ACCOUNT_ID.source })),
    role: t.Optional(RoleSchema),
    operator: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);
const PersonIdParams = t.Object({ id: t.String({ pattern: PERSON_ID.source }) });
type PageRequest = { query: { limit?: string; cursor?: string } };

/** Console people as the operator manages them: invites, reset links, people and invites listed. */
export function adminPeopleRoutes(deps: AdminPeopleDeps) {
  async function invite({ body, set }: { body: typeof InviteBody.static; set: { status?: unknown } }) {
    const made = await inviteByOperator(deps, {
      email: body.email,
      accountId: body.account_id ?? null,
      role: body.role,
      operator: body.operator ?? false,
    });
    set.status = 201;
    return made;
  }

  async function resetPassword({ body }: { body: { email: string } }) {
    return await passwordResetByOperator(deps, body.email);
  }

  async function people({ query }: PageRequest) {
    const { limit, cursor } = paging(query, idCursor(PERSON_ID));
    return await listPeoplePage(deps, limit, cursor);
  }

  async function invites({ query }: PageRequest) {
    const { limit, cursor } = paging(query, idCursor(INVITE_ID));
    return await listInvitesPage(deps, limit, cursor);
  }

  async function revokeInvite({ params }: { params: { id: string } }) {
    return await revokeInviteByOperator(deps, params.id);
  }

  async function disablePerson({ params, body }: { params: { id: string }; body: { reason: string } }) {
    return await setPersonDisabledByOperator(deps, params.id, { reason: body.reason });
  }

  async function enablePerson({ params }: { params: { id: string } }) {
    return await setPersonDisabledByOperator(deps, params.id, null);
  }

  return new Elysia()
    .post("/users/invite", invite, {
      body: InviteBody,
      detail: {
        summary: "Invite a person to the console",
        description:
          "A one-time link `{public_url}/console/invite/<token>`, valid 7 days, where the person sets a password (an existing person confirms with theirs). Without account_id, accepting creates a new account (its Default key shown once) with the person as owner; with it, the person joins that account with role (default member). operator: the person also gets the operator pages. Sign-up mode closed still accepts these (they are operator-made). Only the link's SHA-256 is stored: it cannot be shown again. With [smtp] configured the link is also mailed to `email` (mailed: true).",
      },
      response: {
        201: t.Object({ url: t.String(), expires_at: t.String(), mailed: MailedSchema }),
        ...errors(400, 401, 404),
      },
    })
    .post("/users/reset-password", resetPassword, {
      body: t.Object({ email: t.String({ minLength: 1, maxLength: 254 }) }, { additionalProperties: false }),
      detail: {
        summary: "Make a password reset link",
        description:
          "A one-time link `{public_url}/console/reset/<token>`, valid 1 hour. Setting a new password through it signs the person out everywhere. An unknown email is 404 here (the operator may know); the console's own reset page never tells. With [smtp] configured the link is also mailed to the person's email (mailed: true).",
      },
      response: { 200: t.Object({ url: t.String(), mailed: MailedSchema }), ...errors(400, 401, 404) },
    })
    .get("/people", people, {
      query: t.Object(PagingQuery),
      detail: {
        summary: "List console people",
        description:
          "Oldest first, each with their memberships (account and role). Never a password or secret.",
      },
      response: { 200: PageOf(PersonSchema), ...errors(400, 401) },
    })
    .get("/invites", invites, {
      query: t.Object(PagingQuery),
      detail: {
        summary: "List invites",
        description:
          "Newest first, with their state (pending, used, revoked, expired). The links themselves are never stored.",
      },
      response: { 200: PageOf(InviteSchema), ...errors(400, 401) },
    })
    .delete("/invites/:id", revokeInvite, {
      params: t.Object({ id: t.String({ pattern: INVITE_ID.source }) }),
      detail: {
        summary: "Revoke an invite",
        description: "An unused invite stops working at once; a used or unknown one is 404.",
      },
      response: { 200: InviteSchema, ...errors(400, 401, 404) },
    })
    .post("/people/:id/disable", disablePerson, {
      params: PersonIdParams,
      body: ReasonBody,
      detail: {
        summary: "Disable a person",
        description:
          "With a required reason (1 to 500 characters). The person cannot sign in (the answer of a failed sign-in) and every session of theirs ends at once, in every account. Their accounts and keys keep working (disable an account for that).",
      },
      response: { 200: PersonSchema, ...errors(400, 401, 404) },
    })
    .post("/people/:id/enable", enablePerson, {
      params: PersonIdParams,
      detail: { summary: "Enable a person", description: "They may sign in again." },
      response: { 200: PersonSchema, ...errors(400, 401, 404) },
    });
}
