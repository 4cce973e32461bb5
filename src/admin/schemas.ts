import { t } from "elysia";
import { AccountSchema, KeySchema } from "../accounts/schemas.ts";
import { MicroString } from "../http/schemas.ts";

/** Schemas and id shapes of the operator API (/admin/v1), shared by its route groups. */
const Nullable = <S extends Awaited<ReturnType<typeof t.String>>>(s: S) => t.Union([s, t.Null()]);
/** Whether (and why) an operator disabled the account: its keys are refused (401) while it is. */
export const AccountDisabledFields = {
  disabled_at: Nullable(t.String({ description: "When an operator disabled the account; null: enabled." })),
  disabled_reason: Nullable(t.String({ description: "The operator's reason (operators only)." })),
};
export const AdminAccount = t.Composite([
  t.Omit(AccountSchema, ["month", "month_spent_micro"]),
  t.Object(AccountDisabledFields),
]);
export const FxSchema = t.Object(
  {
    currency: t.String(),
    rate_micro: MicroString("micro-units of the currency per 1 USD"),
    source: t.String(),
    updated_at: t.Union([t.String(), t.Null()]),
  },
  { title: "FxRate" },
);
export const ACCOUNT_ID = /^acct_[0-9A-Za-z]{8,64}$/;
export const PERSON_ID = /^person_[0-9A-Za-z]{8,64}$/;
export const INVITE_ID = /^inv_[0-9A-Za-z]{8,64}$/;
export const AccountId = t.Object({ id: t.String({ pattern: ACCOUNT_ID.source }) });
export const KeyId = t.Object({ id: t.String({ pattern: "^key_[0-9A-Za-z]{8,64}$" }) });
export const AdminKey = t.Composite([KeySchema, t.Object({ account_id: t.String() })], {
  title: "AdminApiKey",
});
export const RoleSchema = t.Union([t.Literal("owner"), t.Literal("member")]);
export const PersonSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal("person"),
    email: t.String(),
    operator: t.Boolean(),
    two_factor: t.Boolean(),
    has_password: t.Boolean({ description: "false until the person has accepted an invite." }),
    created_at: t.String(),
    disabled_at: Nullable(t.String()),
    disabled_reason: Nullable(t.String({ description: "The operator's reason while disabled." })),
    memberships: t.Array(t.Object({ account_id: t.String(), role: RoleSchema })),
  },
  { title: "Person" },
);
export const MailedSchema = t.Boolean({
  description: "Whether the link was also queued for email ([smtp] configured; docs/billing.md).",
});
export const InviteSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal("invite"),
    email: Nullable(t.String()),
    account_id: Nullable(t.String({ description: "null: accepting creates a new account." })),
    role: RoleSchema,
    operator: t.Boolean(),
    created_by: Nullable(
      t.String({ description: "The person who made it; null: the operator (CLI, admin API)." }),
    ),
    created_at: t.String(),
    expires_at: t.String(),
    used_at: Nullable(t.String()),
    used_by: Nullable(t.String()),
    revoked_at: Nullable(t.String()),
    state: t.Union([t.Literal("pending"), t.Literal("used"), t.Literal("revoked"), t.Literal("expired")]),
  },
  { title: "Invite" },
);
/** A listing's answer: one page of `item` and the cursor of the next (null on the last page). */
export const PageOf = <S extends Parameters<typeof t.Array>[0]>(item: S) =>
  t.Object({ data: t.Array(item), next_cursor: t.Union([t.String(), t.Null()]) });

/** An operator's reason (disabling an account or a person): 1 to 500 characters, checked by requireReason. */
export const ReasonBody = t.Object(
  { reason: t.String({ maxLength: 2000, description: "Why (1 to 500 characters once trimmed)." }) },
  { additionalProperties: false },
);
