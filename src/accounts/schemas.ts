import { t } from "elysia";
import { MicroInput, PagingQuery } from "../http/inputs.ts";
import { MicroString } from "../http/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import { KEY_LIST_MAX_ENTRIES, KEY_LIST_MAX_LENGTH } from "./key-controls.ts";

export const AccountSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal("account"),
    name: t.String(),
    currency: t.Union([t.Literal("USD"), t.Literal("RUB")]),
    balance_micro: MicroString("Balance in micro-units of the account currency."),
    held_micro: MicroString("Amount reserved by open jobs."),
    available_micro: MicroString("balance - held: what new jobs can reserve."),
    month: t.String({ description: "The current calendar month (UTC), YYYY-MM." }),
    month_spent_micro: MicroString("Charged this month, all keys."),
    created_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  },
  { title: "Account" },
);

export const LedgerEntrySchema = t.Object(
  {
    id: t.String(),
    object: t.Literal("ledger_entry"),
    kind: t.Union([
      t.Literal("topup"),
      t.Literal("adjustment"),
      t.Literal("hold"),
      t.Literal("charge"),
      t.Literal("release"),
    ]),
    label: t.Union([t.Literal("API"), t.Literal("STUDIO"), t.Literal("ADMIN"), t.Literal("TOPUP")], {
      description:
        "Where the movement came from: API or STUDIO work, an operator's credit or adjustment (ADMIN), or money in from a payment or a redeem code (TOPUP).",
    }),
    amount_micro: MicroString("The amount the entry is about."),
    balance_delta_micro: MicroString("Effect on the balance (signed)."),
    held_delta_micro: MicroString("Effect on the held amount (signed)."),
    balance_after_micro: MicroString("Balance after this entry."),
    held_after_micro: MicroString("Held after this entry."),
    key_id: t.Union([t.String(), t.Null()]),
    model_id: t.Union([t.String(), t.Null()]),
    request_id: t.Union([t.String(), t.Null()]),
    hold_id: t.Union([t.String(), t.Null()]),
    reason: t.Union([t.String(), t.Null()]),
    ref_id: t.Union([t.String(), t.Null()], {
      description:
        "For TOPUP entries: the order (ord_...) or redeem code (rcode_...) credited; for a refund: its order.",
    }),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "LedgerEntry" },
);

export const LedgerPageSchema = t.Object(
  { data: t.Array(LedgerEntrySchema), next_cursor: t.Union([t.String(), t.Null()]) },
  { title: "LedgerPage" },
);

const SpendRow = { spent_micro: MicroString("Charged in the month."), calls: t.Integer() };
export const SpendSchema = t.Object(
  {
    month: t.String(),
    total_micro: MicroString("Charged in the month: every key's, and the studio's (charges without a key)."),
    by_key: t.Array(
      t.Object({
        key_id: t.Union([t.String(), t.Null()], {
          description: 'null: the studio\'s charges without a key ("Studio (no key)").',
        }),
        name: t.String(),
        ...SpendRow,
      }),
    ),
    by_model: t.Array(t.Object({ model_id: t.String(), ...SpendRow })),
    by_key_and_model: t.Array(
      t.Object({ key_id: t.Union([t.String(), t.Null()]), model_id: t.String(), ...SpendRow }),
    ),
  },
  { title: "Spend" },
);

export const KeySchema = t.Object(
  {
    id: t.String(),
    object: t.Literal("api_key"),
    name: t.String(),
    prefix: t.String({ description: "First characters of the key, to tell keys apart." }),
    can_manage: t.Boolean({ description: "May manage keys of the account." }),
    monthly_limit_micro: t.Union([MicroString("Monthly spend limit in the account currency."), t.Null()]),
    writes_per_minute: t.Union([t.Integer(), t.Null()]),
    max_in_flight: t.Union([t.Integer(), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    revoked_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    expires_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description: "After this the key is refused (401); null: never.",
    }),
    disabled: t.Boolean({ description: "A disabled key is refused (401) until enabled again." }),
    allowed_models: t.Union([t.Array(t.String()), t.Null()], {
      description:
        "Model ids and prefixes ending in * the key may use (403 model_not_allowed otherwise); null: every model.",
    }),
    allowed_cidrs: t.Union([t.Array(t.String()), t.Null()], {
      description:
        "Client address blocks the key may be used from (403 address_not_allowed otherwise); null: anywhere.",
    }),
  },
  { title: "ApiKey" },
);
export const KeyListSchema = t.Object({ data: t.Array(KeySchema) }, { title: "ApiKeyList" });
export const NewKeySchema = t.Composite(
  [KeySchema, t.Object({ key: t.String({ description: "Shown once." }) })],
  {
    title: "NewApiKey",
  },
);

/** A key's name: 1 to this many characters (the API's schema and the console's form). */
export const KEY_NAME_MAX_LENGTH = 100;

const ControlList = (description: string) =>
  t.Optional(
    t.Union(
      [
        t.Array(t.String({ minLength: 1, maxLength: KEY_LIST_MAX_LENGTH }), {
          maxItems: KEY_LIST_MAX_ENTRIES,
        }),
        t.Null(),
      ],
      { description },
    ),
  );

/** The key controls (key-controls.ts checks them further), shared by the API and the admin API. */
export const KeyControlFields = {
  expires_at: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Null()], {
      description: "RFC 3339 time after which the key is refused (401), in the future; null: never.",
    }),
  ),
  allowed_models: ControlList(
    `Model ids, or prefixes ending in * (fal-ai/flux/*), at most ${KEY_LIST_MAX_ENTRIES}; null: every model.`,
  ),
  allowed_cidrs: ControlList(
    `Client address blocks (203.0.113.0/24, 2001:db8::/32; a bare address is one host), at most ${KEY_LIST_MAX_ENTRIES}; null: anywhere.`,
  ),
};

/** The bounds of a key's write rate and in-flight cap (the API's schema and the console's form). */
export const KEY_WRITES_MAX = 1_000_000;
export const KEY_IN_FLIGHT_MAX = 100_000;

const KeySettings = {
  name: t.Optional(t.String({ minLength: 1, maxLength: KEY_NAME_MAX_LENGTH })),
  monthly_limit_micro: t.Optional(t.Union([MicroInput, t.Null()])),
  writes_per_minute: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: KEY_WRITES_MAX }), t.Null()])),
  max_in_flight: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: KEY_IN_FLIGHT_MAX }), t.Null()])),
  ...KeyControlFields,
};
export const CreateKeyBody = t.Object(
  { ...KeySettings, can_manage: t.Optional(t.Boolean({ description: "Default false." })) },
  { additionalProperties: false },
);
export const UpdateKeyBody = t.Object(
  {
    ...KeySettings,
    disabled: t.Optional(
      t.Boolean({ description: "true: refused (401) from the next request on; false: enabled again." }),
    ),
  },
  { additionalProperties: false },
);

export const LedgerQuery = t.Object(PagingQuery);
export const SpendQuery = t.Object({
  month: t.Optional(t.String({ description: "YYYY-MM (UTC); default: this month." })),
});

/**
 * Names clients (and operators used to the CLI's `--monthly-limit` and `--manage`) try for key
 * settings, mapped to the API's own. The API keeps one name per setting; these are refused with a
 * message naming the right field instead of a bare "should not be provided".
 */
const MISNAMED_KEY_FIELDS: Record<string, string> = {
  monthly_limit:
    'the monthly spend limit is "monthly_limit_micro": integer micro-units of the account currency as a string (10.00 is "10000000"); the CLI\'s --monthly-limit takes the decimal',
  monthlyLimit:
    'the monthly spend limit is "monthly_limit_micro": integer micro-units of the account currency as a string (10.00 is "10000000")',
  manage: 'the manage right is "can_manage" (true or false)',
};

/** Route `transform` hook of the key routes: runs before schema validation. */
export function refuseMisnamedKeyFields({ body }: { body: unknown }): void {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return;
  for (const [field, hint] of Object.entries(MISNAMED_KEY_FIELDS)) {
    if (Object.hasOwn(body, field)) {
      const message = `Unknown field "${field}": ${hint}.`;
      throw new DomainError("validation_error", message, {
        param: field,
        details: [{ path: `body.${field}`, message }],
      });
    }
  }
}
