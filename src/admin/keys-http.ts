import { Elysia, t } from "elysia";
import { keyControlsOf } from "../accounts/key-controls.ts";
import { keyChanges } from "../accounts/keys-http.ts";
import {
  KEY_NAME_MAX_LENGTH,
  KeyControlFields,
  KeyListSchema,
  KeySchema,
  refuseMisnamedKeyFields,
  UpdateKeyBody,
} from "../accounts/schemas.ts";
import { MicroInput, microFromInput } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import {
  createKeyFor,
  listAccountKeys,
  type OperatorDeps,
  requireAccount,
  revokeKeyAsOperator,
  updateKeyAsOperator,
} from "./operations.ts";
import { AccountId, AdminKey, KeyId } from "./schemas.ts";

const CreateKeyBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: KEY_NAME_MAX_LENGTH })),
    monthly_limit_micro: t.Optional(MicroInput),
    can_manage: t.Optional(t.Boolean()),
    ...KeyControlFields,
  },
  { additionalProperties: false },
);

/** Any account's API keys: list, revoke, create. */
export function adminKeyRoutes(s: OperatorDeps) {
  async function list({ params }: { params: { id: string } }) {
    return { data: await listAccountKeys(s, params.id) };
  }

  async function revoke({ params }: { params: { id: string } }) {
    return await revokeKeyAsOperator(s, params.id);
  }

  async function create({
    params,
    body,
    set,
  }: {
    params: { id: string };
    body: typeof CreateKeyBody.static;
    set: { status?: unknown };
  }) {
    // An unknown account is 404 before the body's figures are checked.
    await requireAccount(s, params.id);
    set.status = 201;
    return createKeyFor(s, params.id, {
      name: body.name,
      canManage: body.can_manage,
      monthlyLimitMicro: body.monthly_limit_micro
        ? microFromInput(body.monthly_limit_micro, "monthly_limit_micro")
        : null,
      ...keyControlsOf(body),
    });
  }

  async function update({ params, body }: { params: { id: string }; body: typeof UpdateKeyBody.static }) {
    return await updateKeyAsOperator(s, params.id, keyChanges(body));
  }

  return new Elysia()
    .get("/accounts/:id/keys", list, {
      params: AccountId,
      detail: {
        summary: "List an account's keys",
        description: "Every key of the account, revoked ones included (never the key itself).",
      },
      response: { 200: KeyListSchema, ...errors(400, 401, 404) },
    })
    .delete("/keys/:id", revoke, {
      params: KeyId,
      detail: {
        summary: "Revoke a key",
        description:
          "Any account's key, at once: the next request with it is 401. Unlike DELETE /v1/keys/{id}, the operator may revoke an account's last manage key (give the account a new one with POST /admin/v1/accounts/{id}/keys and can_manage). Revoking a revoked key returns it unchanged.",
      },
      response: { 200: AdminKey, ...errors(400, 401, 404) },
    })
    .patch("/keys/:id", update, {
      params: KeyId,
      transform: refuseMisnamedKeyFields,
      body: UpdateKeyBody,
      detail: {
        summary: "Update a key",
        description:
          "Any account's key, with the fields of PATCH /v1/keys/{id} (name, limits, expires_at, allowed_models, allowed_cidrs, disabled). Applies from the next request on, on every instance. A revoked key is 409.",
      },
      response: { 200: AdminKey, ...errors(400, 401, 404, 409) },
    })
    .post("/accounts/:id/keys", create, {
      params: AccountId,
      transform: refuseMisnamedKeyFields,
      body: CreateKeyBody,
      detail: { summary: "Create a key for an account" },
      response: {
        201: t.Composite([KeySchema, t.Object({ key_id: t.String(), key: t.String() })]),
        ...errors(400, 401, 404),
      },
    });
}
