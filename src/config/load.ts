import { readFileSync } from "node:fs";
import { Value } from "@sinclair/typebox/value";
import { Cron } from "croner";
import { parseCidr } from "../lib/addresses.ts";
import { formatMicro, parseDecimalToMicro } from "../lib/money.ts";
import { stripTrailingSlashes } from "../lib/url.ts";
import { providerType } from "../providers/list.ts";
import {
  ConfigFile,
  type DatabaseSettings,
  DEFAULT_LIMITS,
  type LiveSettings,
  type MetricsSettings,
  type PaymentAmounts,
  type PaymentSettings,
  type RetentionSettings,
  type ServerSettings,
  type SmtpSettings,
} from "./schema.ts";

export class ConfigError extends Error {}

export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_DATA_DIR = "./.data";

/** Reads and validates the config file; every problem is one line naming the file and the key. */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`config ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  let parsed: unknown;
  try {
    parsed = path.endsWith(".json") ? JSON.parse(text) : Bun.TOML.parse(text);
  } catch (err) {
    throw new ConfigError(
      `config ${path}: not valid ${path.endsWith(".json") ? "JSON" : "TOML"}: ${(err as Error).message}`,
    );
  }
  const first = Value.Errors(ConfigFile, parsed).First();
  if (first) {
    const key = first.path.replace(/^\//, "").replaceAll("/", ".") || "(top level)";
    const hint = first.message.toLowerCase().includes("unexpected property") ? " (unknown key)" : "";
    throw new ConfigError(`config ${path}: ${key}: ${first.message.toLowerCase()}${hint}`);
  }
  const file = parsed as ConfigFile;
  if (file.fx?.refresh) {
    try {
      new Cron(file.fx.refresh, { paused: true }).stop();
    } catch (err) {
      throw new ConfigError(`config ${path}: fx.refresh: not a cron pattern (${(err as Error).message})`);
    }
  }
  const cidrLists = {
    "webhooks.allow_private_cidrs": file.webhooks?.allow_private_cidrs,
    "server.trusted_proxies": file.server?.trusted_proxies,
  };
  for (const [key, list] of Object.entries(cidrLists)) {
    for (const [i, cidr] of (list ?? []).entries()) {
      try {
        parseCidr(cidr);
      } catch (err) {
        throw new ConfigError(`config ${path}: ${key}[${i}]: ${(err as Error).message}`);
      }
    }
  }
  return file;
}

/** Provider settings with their secrets read from the environment or a file. */
function providersFrom(
  file: ConfigFile | null,
  env: Record<string, string | undefined>,
): LiveSettings["providers"] {
  const out: LiveSettings["providers"] = {};
  for (const [name, p] of Object.entries(file?.providers ?? {})) {
    if (name === "sandbox")
      throw new ConfigError(`providers.${name}: "sandbox" is the built-in provider's name`);
    let apiKey: string | null = null;
    if (p.api_key_env) {
      apiKey = env[p.api_key_env] ?? null;
      if (!apiKey)
        throw new ConfigError(
          `providers.${name}.api_key_env: environment variable ${p.api_key_env} is not set`,
        );
    } else if (p.api_key_file) {
      try {
        apiKey = readFileSync(p.api_key_file, "utf8").trim();
      } catch (err) {
        throw new ConfigError(
          `providers.${name}.api_key_file: cannot read ${p.api_key_file} (${(err as NodeJS.ErrnoException).code ?? err})`,
        );
      }
    }
    const own = Object.keys(providerType(p.type)?.config ?? {}).filter((k) => p[k] !== undefined);
    out[name] = {
      type: p.type,
      baseUrl: stripTrailingSlashes(p.base_url),
      apiKey,
      timeoutMs: (p.timeout_seconds ?? 600) * 1000,
      concurrency: p.concurrency ?? 4,
      pollIntervalMs: p.poll_interval_ms ?? 1000,
      workflows: (p.workflows as Record<string, unknown> | undefined) ?? {},
      options: Object.fromEntries(own.map((k) => [k, p[k]])),
    };
  }
  return out;
}

export function liveSettingsFrom(
  file: ConfigFile | null,
  env: Record<string, string | undefined> = process.env,
): LiveSettings {
  const l = file?.limits ?? {};
  return {
    providers: providersFrom(file, env),
    limits: {
      writesPerMinute: l.writes_per_minute ?? DEFAULT_LIMITS.writesPerMinute,
      inFlight: l.in_flight ?? DEFAULT_LIMITS.inFlight,
      runWaitSeconds: l.run_wait_seconds ?? DEFAULT_LIMITS.runWaitSeconds,
      uploadMaxBytes: l.upload_max_bytes ?? DEFAULT_LIMITS.uploadMaxBytes,
    },
    studio: { inFlightPerPerson: file?.studio?.in_flight_per_person ?? 2 },
    fxRefresh: file?.fx?.rub_url
      ? { url: file.fx.rub_url, field: file.fx.rub_field ?? null, cron: file.fx.refresh ?? "0 * * * *" }
      : null,
    queue: {
      concurrency: { sandbox: 8, ...file?.queue?.concurrency },
    },
    files: {
      retentionMs: (file?.files?.retention_hours ?? 24 * 7) * 3600_000,
      minFreeBytes: (file?.files?.min_free_mb ?? 1024) * 1024 * 1024,
    },
    retention: retentionFrom(file?.retention),
    sandbox: file?.catalog?.sandbox ?? true,
    models: file?.models ?? [],
    webhooks: { allowPrivateCidrs: file?.webhooks?.allow_private_cidrs ?? [] },
    trustedProxies: (file?.server?.trusted_proxies ?? []).map(parseCidr),
    metrics: metricsFrom(file, env),
    smtp: smtpFrom(file, env),
    console: {
      enabled: file?.console?.enabled ?? true,
      signup: file?.console?.signup ?? "invite",
      currency: file?.console?.currency ?? "USD",
    },
    payments: paymentsFrom(file, env),
  };
}

/**
 * [retention] requests_days when absent: 90 days, a quarter of request history for support and
 * disputes (OpenAI keeps stored responses and dashboard logs 30 days); money rows stay forever.
 */
export const DEFAULT_REQUESTS_DAYS = 90;

/**
 * requests_days as milliseconds; 0 (keep forever) as null. 1 is refused: a webhook is retried for
 * up to 27.6 hours after its job ends (docs/webhooks.md), and the purge deletes a record's deliveries.
 */
function requestsRetentionMs(days: number): number | null {
  if (days === 1)
    throw new ConfigError(
      "retention.requests_days: 0 (keep forever) or at least 2 (webhooks are retried for up to 27.6 hours)",
    );
  return days === 0 ? null : days * 86_400_000;
}

/**
 * [retention]. ledger_days, when set, must cover requests_days (a kept request record's job points
 * at its hold, so holds can only go after their records) and at least 62 days (the whole previous
 * month's statement stays readable); requests kept forever would keep every hold, so they must expire.
 */
function retentionFrom(r: { requests_days?: number; ledger_days?: number } | undefined): RetentionSettings {
  const requestsDays = r?.requests_days ?? DEFAULT_REQUESTS_DAYS;
  const ledgerDays = r?.ledger_days ?? 0;
  if (ledgerDays !== 0 && (ledgerDays < 62 || requestsDays === 0 || ledgerDays < requestsDays))
    throw new ConfigError(
      `retention.ledger_days: 0 (keep forever) or at least 62 and at least requests_days (${requestsDays}), which must not be 0`,
    );
  return {
    requestsMs: requestsRetentionMs(requestsDays),
    ledgerMs: ledgerDays === 0 ? null : ledgerDays * 86_400_000,
  };
}

/** Defaults of [payments.usd] / [payments.rub] (decimals in the main unit). */
const DEFAULT_AMOUNTS = {
  USD: { minimum: "5", maximum: "1000", presets: ["10", "25", "50", "100"] },
  RUB: { minimum: "500", maximum: "100000", presets: ["1000", "2500", "5000", "10000"] },
} as const;

/** A secret from `<name>_env` or `<name>_file` (exactly one); a missing one is one line naming the key. */
function secretFrom(
  section: Record<string, unknown>,
  at: string,
  name: string,
  env: Record<string, string | undefined>,
): string {
  const envName = section[`${name}_env`] as string | undefined;
  const file = section[`${name}_file`] as string | undefined;
  if (envName && file) throw new ConfigError(`${at}: give ${name}_env or ${name}_file, not both`);
  let value: string | undefined;
  if (envName) {
    value = env[envName]?.trim();
    if (!value) throw new ConfigError(`${at}.${name}_env: environment variable ${envName} is not set`);
  } else if (file) {
    try {
      value = readFileSync(file, "utf8").trim();
    } catch (err) {
      throw new ConfigError(
        `${at}.${name}_file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
    }
    if (!value) throw new ConfigError(`${at}.${name}_file: ${file} is empty`);
  } else {
    throw new ConfigError(
      `${at}: ${name}_env or ${name}_file is required (secrets are never written in the config)`,
    );
  }
  if (/\s/.test(value)) throw new ConfigError(`${at}: the ${name} contains whitespace`);
  return value;
}

function amountsFrom(
  given: { minimum?: string; maximum?: string; presets?: string[] } | undefined,
  currency: "USD" | "RUB",
): PaymentAmounts {
  const d = DEFAULT_AMOUNTS[currency];
  const at = `payments.${currency.toLowerCase()}`;
  const micro = (text: string) => parseDecimalToMicro(text)!;
  const minimumMicro = micro(given?.minimum ?? d.minimum);
  const maximumMicro = micro(given?.maximum ?? d.maximum);
  const presetsMicro = (given?.presets ?? [...d.presets]).map(micro);
  if (minimumMicro <= 0n) throw new ConfigError(`${at}.minimum: must be above 0`);
  if (maximumMicro < minimumMicro) throw new ConfigError(`${at}.maximum: must not be below minimum`);
  for (const p of presetsMicro) {
    if (p < minimumMicro || p > maximumMicro)
      throw new ConfigError(`${at}.presets: ${formatMicro(p)} is outside minimum..maximum`);
  }
  return { minimumMicro, maximumMicro, presetsMicro };
}

/** [payments]: amounts, order expiry, and the providers with their secrets (read now, at start or reload). */
function paymentsFrom(file: ConfigFile | null, env: Record<string, string | undefined>): PaymentSettings {
  const p = file?.payments ?? {};
  let stripe: PaymentSettings["stripe"] = null;
  if (p.stripe) {
    const s = p.stripe;
    const api = new URL(s.api_base ?? "https://api.stripe.com");
    const protocol = api.protocol === "http:" ? "http" : "https";
    stripe = {
      secretKey: secretFrom(s, "payments.stripe", "secret_key", env),
      webhookSecret: secretFrom(s, "payments.stripe", "webhook_secret", env),
      api: { protocol, host: api.hostname, port: Number(api.port || (protocol === "http" ? 80 : 443)) },
      checkoutOrigin: new URL(s.checkout_origin ?? "https://checkout.stripe.com").origin,
      timeoutMs: (s.timeout_seconds ?? 20) * 1000,
    };
  }
  let yookassa: PaymentSettings["yookassa"] = null;
  if (p.yookassa) {
    const y = p.yookassa;
    yookassa = {
      shopId: y.shop_id,
      secretKey: secretFrom(y, "payments.yookassa", "secret_key", env),
      apiBase: stripTrailingSlashes(y.api_base ?? "https://api.yookassa.ru/v3"),
      checkoutOrigin: new URL(y.checkout_origin ?? "https://yoomoney.ru").origin,
      timeoutMs: (y.timeout_seconds ?? 20) * 1000,
    };
  }
  return {
    amounts: { USD: amountsFrom(p.usd, "USD"), RUB: amountsFrom(p.rub, "RUB") },
    orderTtlSeconds: (p.order_expiry_hours ?? 24) * 3600,
    stripe,
    yookassa,
  };
}

/** [smtp]: the password only from password_env or password_file (never inline); user and password together. */
export function smtpFrom(
  file: ConfigFile | null,
  env: Record<string, string | undefined>,
): SmtpSettings | null {
  const m = file?.smtp;
  if (!m) return null;
  if (m.password_env && m.password_file)
    throw new ConfigError("smtp: give password_env or password_file, not both");
  let password: string | null = null;
  if (m.password_env) {
    password = env[m.password_env] ?? null;
    if (!password)
      throw new ConfigError(`smtp.password_env: environment variable ${m.password_env} is not set`);
  } else if (m.password_file) {
    try {
      password = readFileSync(m.password_file, "utf8").trim();
    } catch (err) {
      throw new ConfigError(
        `smtp.password_file: cannot read ${m.password_file} (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
    }
  }
  if ((m.user === undefined) !== (password === null))
    throw new ConfigError(
      m.user === undefined
        ? "smtp: a password is set but no user"
        : "smtp.user: needs password_env or password_file",
    );
  if (!/^[^\s<>@]+@[^\s<>@]+$|<[^\s<>@]+@[^\s<>@]+>$/.test(m.from.trim()))
    throw new ConfigError(`smtp.from: "${m.from}" is not an address (name@host or "Name <name@host>")`);
  const tls = m.tls ?? "starttls";
  return {
    host: m.host,
    port: m.port ?? (tls === "tls" ? 465 : 587),
    tls,
    user: m.user ?? null,
    password,
    from: m.from.trim(),
  };
}

/** [metrics]: the scrape token (env GENGATE_METRICS_TOKEN > token_file > token) and the listener. */
function metricsFrom(file: ConfigFile | null, env: Record<string, string | undefined>): MetricsSettings {
  const m = file?.metrics ?? {};
  let token: string | null = m.token ?? null;
  let from = "metrics.token";
  if (m.token_file) {
    from = "metrics.token_file";
    try {
      token = readFileSync(m.token_file, "utf8").trim();
    } catch (err) {
      throw new ConfigError(
        `metrics.token_file: cannot read ${m.token_file} (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
    }
  }
  if (env.GENGATE_METRICS_TOKEN) {
    from = "GENGATE_METRICS_TOKEN";
    token = env.GENGATE_METRICS_TOKEN;
  }
  if (token !== null && !/^[\x21-\x7e]{16,256}$/.test(token))
    throw new ConfigError(`${from}: the metrics token must be 16 to 256 printable characters, no spaces`);
  let listen: MetricsSettings["listen"] = null;
  if (m.listen) {
    const at = m.listen.lastIndexOf(":");
    const port = Number(m.listen.slice(at + 1));
    if (!Number.isInteger(port) || port > 65535)
      throw new ConfigError(`metrics.listen: "${m.listen}" has no valid port`);
    listen = { host: m.listen.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port };
  }
  return { token, listen, listenAuth: m.listen_auth !== "none" };
}

export interface ServeFlags {
  port?: string;
  host?: string;
  "data-dir"?: string;
  config?: string;
  "public-url"?: string;
  "tls-cert"?: string;
  "tls-key"?: string;
}

/** Precedence: flag > environment > config file > default. */
export function resolveServerSettings(
  flags: ServeFlags,
  env: Record<string, string | undefined>,
  file: ConfigFile | null,
  configPath: string | null,
): ServerSettings {
  const portText = flags.port ?? env.GENGATE_PORT;
  let port = file?.server?.port ?? DEFAULT_PORT;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
      throw new ConfigError(`port: "${portText}" is not a port number (0-65535)`);
    }
    port = Number(portText);
  }
  const host = flags.host ?? env.GENGATE_HOST ?? file?.server?.host ?? DEFAULT_HOST;
  const dataDir = flags["data-dir"] ?? env.GENGATE_DATA_DIR ?? file?.server?.data_dir ?? DEFAULT_DATA_DIR;
  const publicUrl = flags["public-url"] ?? env.GENGATE_PUBLIC_URL ?? file?.server?.public_url ?? "";
  if (publicUrl && !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(publicUrl)) {
    throw new ConfigError(`public-url: "${publicUrl}" is not an http(s) URL`);
  }
  return {
    host,
    port,
    dataDir,
    publicUrl: stripTrailingSlashes(publicUrl),
    configPath,
    tls: tlsSettings(flags, env, file),
    database: databaseSettings(env, file),
  };
}

const SSL_MODES = ["disable", "prefer", "require", "verify-ca", "verify-full"];

/**
 * database_url (env GENGATE_DATABASE_URL > config [server] database_url): absent or `sqlite:` is
 * the data dir's SQLite file; `postgres://user@host[:port]/database[?sslmode=...]` is PostgreSQL,
 * its password from GENGATE_DATABASE_PASSWORD_FILE, else PGPASSWORD, else the URL. Errors never
 * echo the URL's password.
 */
export function databaseSettings(
  env: Record<string, string | undefined>,
  file: ConfigFile | null,
): DatabaseSettings {
  const text = (env.GENGATE_DATABASE_URL || file?.server?.database_url || "").trim();
  if (text === "" || text === "sqlite:") return { kind: "sqlite" };
  let u: URL | null = null;
  try {
    u = new URL(text);
  } catch {}
  const usage = "use sqlite: or postgres://user@host:port/database (docs/scale-out.md)";
  if (!u) throw new ConfigError(`database_url: not a URL; ${usage}`);
  const shown = `"${text.replace(/\/\/([^@/]*):[^@/]*@/, "//$1:***@")}"`;
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:")
    throw new ConfigError(`database_url: ${shown} is not a database URL; ${usage}`);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ""));
  if (!u.hostname || !u.username || !database || database.includes("/"))
    throw new ConfigError(`database_url: ${shown} needs a user, a host and a database name; ${usage}`);
  for (const [name, value] of u.searchParams) {
    if (name !== "sslmode")
      throw new ConfigError(`database_url: unknown parameter "${name}" (only sslmode is understood)`);
    if (!SSL_MODES.includes(value))
      throw new ConfigError(`database_url: sslmode must be one of ${SSL_MODES.join(", ")} (got "${value}")`);
  }
  let password: string | null = u.password ? decodeURIComponent(u.password) : null;
  if (env.PGPASSWORD) password = env.PGPASSWORD;
  const passwordFile = env.GENGATE_DATABASE_PASSWORD_FILE;
  if (passwordFile) {
    try {
      password = readFileSync(passwordFile, "utf8").trim();
    } catch (err) {
      throw new ConfigError(
        `GENGATE_DATABASE_PASSWORD_FILE: cannot read ${passwordFile} (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
    }
    if (!password) throw new ConfigError(`GENGATE_DATABASE_PASSWORD_FILE: ${passwordFile} is empty`);
  }
  const url = new URL(u.toString());
  url.password = "";
  return { kind: "postgres", url: url.toString(), password };
}

/** A command that works on the SQLite file only (backup, restore) given a PostgreSQL database_url. */
export class BackendNotReadyError extends ConfigError {}

/**
 * Refuses a PostgreSQL database_url for the commands that copy the SQLite file (backup, restore),
 * before anything is touched. Exit status 2, like a usage error.
 */
export function refuseUnconvertedBackend(database: DatabaseSettings | undefined): void {
  if (database?.kind !== "postgres") return;
  throw new BackendNotReadyError(
    "database_url: backup and restore copy the data dir's SQLite database; with PostgreSQL back it up with PostgreSQL's own tools (pg_dump; see docs/scale-out.md)",
  );
}

/** TLS: both PEM files or neither, each readable; checked before anything starts. */
function tlsSettings(
  flags: ServeFlags,
  env: Record<string, string | undefined>,
  file: ConfigFile | null,
): ServerSettings["tls"] {
  const cert = flags["tls-cert"] ?? env.GENGATE_TLS_CERT ?? file?.server?.tls_cert ?? "";
  const key = flags["tls-key"] ?? env.GENGATE_TLS_KEY ?? file?.server?.tls_key ?? "";
  if (!cert && !key) return null;
  if (!cert || !key) {
    throw new ConfigError(
      `tls: ${cert ? "tls-cert is set but tls-key is not" : "tls-key is set but tls-cert is not"}; give both (or neither)`,
    );
  }
  for (const [name, path, marker] of [
    ["tls-cert", cert, "CERTIFICATE"],
    ["tls-key", key, "PRIVATE KEY"],
  ] as const) {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      throw new ConfigError(`${name}: cannot read "${path}" (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
    if (!text.includes(`-----BEGIN `) || !text.includes(marker)) {
      throw new ConfigError(`${name}: "${path}" is not a PEM ${marker.toLowerCase()} file`);
    }
  }
  return { cert, key };
}
