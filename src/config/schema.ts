import { type Static, Type as T } from "@sinclair/typebox";
import type { Cidr } from "../lib/addresses.ts";
import { CONFIGURABLE_TYPES } from "../providers/list.ts";

/**
 * One [providers.<name>] section: the keys every type takes, plus each type's own keys from its
 * descriptor (src/providers/list.ts). A key of another type is accepted, as it always was.
 */
const ProviderSection = T.Object(
  {
    type: T.Union(
      CONFIGURABLE_TYPES.map((d) => T.Literal(d.type)),
      { description: `${CONFIGURABLE_TYPES.map((d) => d.description).join("; ")}.` },
    ),
    base_url: T.String({ pattern: "^https?://", description: "e.g. http://127.0.0.1:11434/v1" }),
    api_key_env: T.Optional(
      T.String({
        pattern: "^[A-Z_][A-Z0-9_]*$",
        description: "Environment variable holding the key.",
      }),
    ),
    api_key_file: T.Optional(T.String({ minLength: 1, description: "File holding the key." })),
    timeout_seconds: T.Optional(
      T.Integer({ minimum: 1, maximum: 3600, description: "Per upstream HTTP call." }),
    ),
    concurrency: T.Optional(
      T.Integer({ minimum: 1, maximum: 1000, description: "Workers for this provider." }),
    ),
    poll_interval_ms: T.Optional(T.Integer({ minimum: 50, maximum: 60_000 })),
    // The types' own keys: validated here, typed by their adapters (ProviderSettings.options).
    ...(Object.assign({}, ...CONFIGURABLE_TYPES.map((d) => d.config)) as Record<never, never>),
  },
  { additionalProperties: false },
);
type ProviderSection = Static<typeof ProviderSection> & Record<string, unknown>;

/** [smtp]: outgoing mail for invites, password resets and low-balance alerts (docs/billing.md "Email"). */
const SmtpSection = T.Object(
  {
    host: T.String({ minLength: 1, maxLength: 253, description: "SMTP server host name or address." }),
    port: T.Optional(
      T.Integer({ minimum: 1, maximum: 65535, description: 'Default 587 (465 with tls = "tls").' }),
    ),
    tls: T.Optional(
      T.Union([T.Literal("none"), T.Literal("starttls"), T.Literal("tls")], {
        description:
          '"starttls" (default: plain connect, then STARTTLS, required), "tls" (TLS from the first byte, port 465), "none" (no encryption; local relays only).',
      }),
    ),
    user: T.Optional(T.String({ minLength: 1, maxLength: 256, description: "Login name (AUTH)." })),
    password_env: T.Optional(
      T.String({ pattern: "^[A-Z_][A-Z0-9_]*$", description: "Environment variable holding the password." }),
    ),
    password_file: T.Optional(T.String({ minLength: 1, description: "File holding the password." })),
    from: T.String({
      minLength: 3,
      maxLength: 320,
      description: 'Sender, e.g. "gengate <billing@example.com>" or billing@example.com.',
    }),
  },
  { additionalProperties: false },
);

/** A decimal amount in a currency's main unit, at most 2 places ("10", "12.50"): providers take cents. */
const Amount = T.String({
  pattern: "^[0-9]{1,12}(\\.[0-9]{1,2})?$",
  description: 'A decimal, e.g. "10" or "12.50".',
});
const PaymentAmounts = T.Object(
  {
    minimum: T.Optional(Amount),
    maximum: T.Optional(Amount),
    presets: T.Optional(T.Array(Amount, { maxItems: 8, description: "The billing page's preset buttons." })),
  },
  { additionalProperties: false },
);
const EnvName = T.String({ pattern: "^[A-Z_][A-Z0-9_]*$", description: "Environment variable holding it." });
const SecretFile = T.String({ minLength: 1, description: "File holding it." });
const HttpBase = T.String({ pattern: "^https?://[^\\s/]+(/[^\\s]*)?$" });
/** [payments] (docs/billing.md, "Payments"): secrets only from *_env or *_file, never inline. */
const PaymentsSection = T.Object(
  {
    order_expiry_hours: T.Optional(
      T.Integer({ minimum: 1, maximum: 24, description: "An unpaid order expires after this (default 24)." }),
    ),
    usd: T.Optional(PaymentAmounts),
    rub: T.Optional(PaymentAmounts),
    stripe: T.Optional(
      T.Object(
        {
          secret_key_env: T.Optional(EnvName),
          secret_key_file: T.Optional(SecretFile),
          webhook_secret_env: T.Optional(EnvName),
          webhook_secret_file: T.Optional(SecretFile),
          api_base: T.Optional(
            T.String({ pattern: "^https?://[^\\s/]+/?$", description: "Default https://api.stripe.com" }),
          ),
          checkout_origin: T.Optional(HttpBase),
          timeout_seconds: T.Optional(T.Integer({ minimum: 1, maximum: 120 })),
        },
        { additionalProperties: false },
      ),
    ),
    yookassa: T.Optional(
      T.Object(
        {
          shop_id: T.String({ pattern: "^[0-9A-Za-z_-]{1,64}$" }),
          secret_key_env: T.Optional(EnvName),
          secret_key_file: T.Optional(SecretFile),
          api_base: T.Optional(
            T.String({
              pattern: "^https?://[^\\s/]+(/[^\\s]*)?$",
              description: "Default https://api.yookassa.ru/v3",
            }),
          ),
          checkout_origin: T.Optional(HttpBase),
          timeout_seconds: T.Optional(T.Integer({ minimum: 1, maximum: 120 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * The operator's config file (TOML, or JSON when the name ends in .json). Unknown keys are errors:
 * a typo must not silently fall back to a default. See docs/configuration.md.
 */
export const ConfigFile = T.Object(
  {
    server: T.Optional(
      T.Object(
        {
          host: T.Optional(T.String({ minLength: 1 })),
          port: T.Optional(T.Integer({ minimum: 0, maximum: 65535 })),
          public_url: T.Optional(T.String({ pattern: "^https?://[^\\s/]+(/[^\\s]*)?$" })),
          data_dir: T.Optional(T.String({ minLength: 1 })),
          database_url: T.Optional(
            T.String({
              minLength: 1,
              description: "sqlite: (default) or postgres://... (docs/scale-out.md)",
            }),
          ),
          tls_cert: T.Optional(T.String({ minLength: 1, description: "PEM certificate (chain) file" })),
          tls_key: T.Optional(T.String({ minLength: 1, description: "PEM private key file" })),
          storage_url: T.Optional(
            T.String({ minLength: 1, description: "file: (the data dir, default) or s3://bucket/prefix" }),
          ),
          trusted_proxies: T.Optional(
            T.Array(T.String({ minLength: 1, maxLength: 64 }), {
              maxItems: 256,
              description:
                "CIDR blocks of the reverse proxies in front of gengate, e.g. 127.0.0.1/32: from them X-Forwarded-For names the client. Default: none (the socket's peer is the client).",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    storage: T.Optional(
      T.Object(
        {
          s3: T.Optional(
            T.Object(
              {
                endpoint: T.Optional(HttpBase),
                region: T.Optional(T.String({ pattern: "^[a-z0-9-]{1,64}$" })),
                path_style: T.Optional(T.Boolean({ description: "Bucket in the path, not the host name." })),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    limits: T.Optional(
      T.Object(
        {
          writes_per_minute: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
          in_flight: T.Optional(T.Integer({ minimum: 1, maximum: 100_000 })),
          run_wait_seconds: T.Optional(T.Integer({ minimum: 0, maximum: 600 })),
          upload_max_bytes: T.Optional(T.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    studio: T.Optional(
      T.Object(
        {
          in_flight_per_person: T.Optional(
            T.Integer({
              minimum: 1,
              maximum: 1000,
              description: "Open studio jobs a person may have at once.",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    catalog: T.Optional(
      T.Object(
        { sandbox: T.Optional(T.Boolean({ description: "Serve the built-in sandbox/* models." })) },
        { additionalProperties: false },
      ),
    ),
    fx: T.Optional(
      T.Object(
        {
          rub_url: T.Optional(
            T.String({ pattern: "^https?://", description: "Where to fetch the USD->RUB rate." }),
          ),
          rub_field: T.Optional(
            T.String({ pattern: "^[A-Za-z0-9_.-]+$", description: "Dot path to the rate in the JSON body." }),
          ),
          refresh: T.Optional(T.String({ minLength: 9, description: "Cron pattern (UTC), default hourly." })),
        },
        { additionalProperties: false },
      ),
    ),
    providers: T.Optional(T.Record(T.String({ pattern: "^[a-z][a-z0-9_-]{0,31}$" }), ProviderSection, {})),
    files: T.Optional(
      T.Object(
        {
          retention_hours: T.Optional(
            T.Integer({ minimum: 1, maximum: 24 * 365, description: "Uploads and outputs." }),
          ),
          min_free_mb: T.Optional(
            T.Integer({ minimum: 0, description: "Uploads are refused (507) below this." }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    retention: T.Optional(
      T.Object(
        {
          requests_days: T.Optional(
            T.Integer({
              minimum: 0,
              maximum: 3650,
              description:
                "Days a finished request's record (input, output, logs, webhook deliveries) is kept: 0 (forever) or 2..3650. Money rows go only with ledger_days. Default 90.",
            }),
          ),
          ledger_days: T.Optional(
            T.Integer({
              minimum: 0,
              maximum: 36500,
              description:
                "Days the money history (ledger entries, resolved holds) is kept: 0 (forever, the default) or at least 62 and at least requests_days (which must then not be 0). Balances and the usage rollups are never deleted.",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    queue: T.Optional(
      T.Object(
        {
          concurrency: T.Optional(
            T.Record(T.String(), T.Integer({ minimum: 1, maximum: 1000 }), {
              description: "Workers per provider, e.g. { sandbox = 8 } (read at start).",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    webhooks: T.Optional(
      T.Object(
        {
          allow_private_cidrs: T.Optional(
            T.Array(T.String({ minLength: 1, maxLength: 64 }), {
              maxItems: 256,
              description:
                "Private CIDR blocks webhook receivers may be in (homelab), e.g. 192.168.1.0/24. Default: none.",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    smtp: T.Optional(SmtpSection),
    metrics: T.Optional(
      T.Object(
        {
          token: T.Optional(
            T.String({
              pattern: "^[\\x21-\\x7e]{16,256}$",
              description:
                "Scrape token for GET /metrics (Bearer), 16+ printable characters. See docs/metrics.md.",
            }),
          ),
          token_file: T.Optional(T.String({ minLength: 1, description: "File holding the scrape token." })),
          listen: T.Optional(
            T.String({
              pattern: "^(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}$",
              description: "Also serve /metrics on this host:port, e.g. 127.0.0.1:9091 (read at start).",
            }),
          ),
          listen_auth: T.Optional(
            T.Union([T.Literal("token"), T.Literal("none")], {
              description: 'On the listen address only: "none" serves /metrics without a token.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    console: T.Optional(
      T.Object(
        {
          enabled: T.Optional(
            T.Boolean({
              description: "Serve the web console at /console (false: API only; / leads to /docs).",
            }),
          ),
          signup: T.Optional(
            T.Union([T.Literal("closed"), T.Literal("invite"), T.Literal("open")], {
              description: 'Who may sign up: "closed" (operator invites only), "invite" (default), "open".',
            }),
          ),
          currency: T.Optional(
            T.Union([T.Literal("USD"), T.Literal("RUB")], {
              description: 'Currency of the accounts that sign-up creates (default "USD").',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    payments: T.Optional(PaymentsSection),
    models: T.Optional(T.Array(T.Unknown())),
  },
  { additionalProperties: false },
);
export type ConfigFile = Omit<Static<typeof ConfigFile>, "providers"> & {
  providers?: Record<string, ProviderSection>;
};

export interface Limits {
  writesPerMinute: number;
  inFlight: number;
  runWaitSeconds: number;
  uploadMaxBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  writesPerMinute: 120,
  inFlight: 20,
  runWaitSeconds: 90,
  uploadMaxBytes: 100 * 1024 * 1024,
};

/** Settings fixed for the life of the process (a change needs a restart). */
export interface ServerSettings {
  host: string;
  port: number;
  dataDir: string;
  publicUrl: string;
  configPath: string | null;
  /** PEM files when gengate terminates TLS itself (both or neither); null serves plain HTTP. */
  tls?: { cert: string; key: string } | null;
  /** database_url (docs/scale-out.md); absent: the data dir's SQLite database. */
  database?: DatabaseSettings;
  /** Where stored files live (`storage_url`); absent: the data dir. */
  storage?: StorageSettings;
}

/** Where the tables live: the data dir's SQLite file, or a PostgreSQL database. */
export type DatabaseSettings =
  | { kind: "sqlite" }
  | { kind: "postgres"; url: string; password: string | null };

/** `storage_url` and `[storage.s3]` resolved (src/config/storage.ts). */
export type StorageSettings =
  | { kind: "file" }
  | {
      kind: "s3";
      bucket: string;
      /** Prepended to every key: "" or ending in "/". */
      prefix: string;
      /** The S3 API's base URL; null: AWS's for the region. */
      endpoint: string | null;
      region: string;
      /** Bucket in the path (most S3-compatible servers) rather than in the host name (AWS). */
      pathStyle: boolean;
      accessKeyId: string;
      secretAccessKey: string;
    };

/** Settings re-read on SIGHUP. */
export interface FxRefresh {
  url: string;
  field: string | null;
  cron: string;
}

export interface QueueSettings {
  concurrency: Record<string, number>;
}

export interface FileSettings {
  /** How long uploads and job outputs are kept. */
  retentionMs: number;
  minFreeBytes: number;
}

/** [retention] (docs/operations.md "Retention"). */
export interface RetentionSettings {
  /** A finished request's record is deleted this long after it ended; null: kept forever. */
  requestsMs: number | null;
  /** Ledger entries and resolved holds are deleted this long after their date; null: kept forever. */
  ledgerMs: number | null;
}

export interface ProviderSettings {
  /** A configurable type of src/providers/list.ts. */
  type: string;
  baseUrl: string;
  /** Resolved at load from api_key_env / api_key_file; never logged or shown. */
  apiKey: string | null;
  /** Per upstream HTTP call. */
  timeoutMs: number;
  concurrency: number;
  pollIntervalMs: number;
  /** comfyui: workflow templates by name (API format JSON with {{field}} placeholders). */
  workflows: Record<string, unknown>;
  /** The section's keys its type's descriptor declares (`config`), as written; absent: none. */
  options?: Record<string, unknown>;
}

export interface LiveSettings {
  providers: Record<string, ProviderSettings>;
  limits: Limits;
  /** [studio] (docs/configuration.md). */
  studio: { inFlightPerPerson: number };
  queue: QueueSettings;
  files: FileSettings;
  retention: RetentionSettings;
  fxRefresh: FxRefresh | null;
  sandbox: boolean;
  models: unknown[];
  /** Webhook SSRF policy: private blocks the operator opened (validated at load). */
  webhooks: { allowPrivateCidrs: string[] };
  /** `[server] trusted_proxies`: peers whose X-Forwarded-For is believed (src/http/request-meta.ts). */
  trustedProxies: Cidr[];
  metrics: MetricsSettings;
  console: ConsoleSettings;
  payments: PaymentSettings;
  /** [smtp]; null: no mail is queued or sent (links are shown and printed as before). */
  smtp: SmtpSettings | null;
}

/** [smtp] resolved (docs/billing.md "Email"); the password is read from its env var or file. */
export interface SmtpSettings {
  host: string;
  port: number;
  tls: "none" | "starttls" | "tls";
  user: string | null;
  password: string | null;
  from: string;
}

/** The amounts a customer may pay in one currency, micro-units (whole cents). */
export interface PaymentAmounts {
  minimumMicro: bigint;
  maximumMicro: bigint;
  presetsMicro: bigint[];
}

/** [payments] (docs/billing.md): providers are null when not configured. */
export interface PaymentSettings {
  amounts: { USD: PaymentAmounts; RUB: PaymentAmounts };
  orderTtlSeconds: number;
  stripe: {
    secretKey: string;
    webhookSecret: string;
    api: { protocol: "http" | "https"; host: string; port: number };
    /** The origin of the hosted checkout pages the customer is sent to (and the CSP allows). */
    checkoutOrigin: string;
    timeoutMs: number;
  } | null;
  yookassa: {
    shopId: string;
    secretKey: string;
    /** e.g. https://api.yookassa.ru/v3 (no trailing slash). */
    apiBase: string;
    checkoutOrigin: string;
    timeoutMs: number;
  } | null;
}

/** [console] (docs/console.md). */
export interface ConsoleSettings {
  /** false: no /console routes at all; / leads to /docs. */
  enabled: boolean;
  signup: "closed" | "invite" | "open";
  /** Currency of the accounts sign-up and sign-up invites create. */
  currency: "USD" | "RUB";
}

/** GET /metrics (docs/metrics.md). */
export interface MetricsSettings {
  /** Scrape token accepted besides the admin token (GENGATE_METRICS_TOKEN > token_file > token). */
  token: string | null;
  /** A second listener serving only /metrics; bound at start (a change needs a restart). */
  listen: { host: string; port: number } | null;
  /** false only with listen_auth = "none": the listener then answers without a token. */
  listenAuth: boolean;
}
