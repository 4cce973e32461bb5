import { readFileSync } from "node:fs";
import { ConfigError } from "./load.ts";
import type { ConfigFile, StorageSettings } from "./schema.ts";

type Env = Record<string, string | undefined>;

/**
 * Where stored files live: env GENGATE_STORAGE_URL > `[server] storage_url` > the data dir.
 * `file:` (or nothing) is <data dir>/files; `s3://bucket/prefix` is an S3-compatible bucket with
 * `[storage.s3]` endpoint, region (else AWS_REGION, else us-east-1) and path_style, and credentials
 * from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the files named by AWS_ACCESS_KEY_ID_FILE /
 * AWS_SECRET_ACCESS_KEY_FILE, never from the config file (docs/scale-out.md, "Files").
 */
export function storageSettingsFrom(env: Env, file: ConfigFile | null): StorageSettings {
  const url = (env.GENGATE_STORAGE_URL ?? file?.server?.storage_url ?? "").trim();
  const s3 = file?.storage?.s3;
  if (url === "" || url === "file:") {
    if (s3) throw new ConfigError("storage.s3: set only with storage_url = s3://bucket/prefix");
    return { kind: "file" };
  }
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/([^\s?#]*))?$/.exec(url);
  if (!m) {
    throw new ConfigError(
      `storage_url: "${url}" is neither file: nor s3://bucket/prefix (bucket: 3-63 lower-case letters, digits, dots, hyphens)`,
    );
  }
  const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
  if (prefix.split("/").some((s) => s === "." || s === ".." || (prefix !== "" && s === "")))
    throw new ConfigError(`storage_url: the prefix "${prefix}" has an empty, "." or ".." segment`);
  return {
    kind: "s3",
    bucket: m[1]!,
    prefix: prefix ? `${prefix}/` : "",
    endpoint: s3?.endpoint?.replace(/\/+$/, "") ?? null,
    region: s3?.region ?? env.AWS_REGION?.trim() ?? "us-east-1",
    pathStyle: s3?.path_style ?? s3?.endpoint !== undefined,
    accessKeyId: credential(env, "AWS_ACCESS_KEY_ID"),
    secretAccessKey: credential(env, "AWS_SECRET_ACCESS_KEY"),
  };
}

/** NAME from the environment, or from the file NAME_FILE names (one of them, not both). */
function credential(env: Env, name: string): string {
  const direct = env[name]?.trim();
  const path = env[`${name}_FILE`]?.trim();
  if (direct && path) throw new ConfigError(`storage_url: give ${name} or ${name}_FILE, not both`);
  let value = direct;
  if (path) {
    try {
      value = readFileSync(path, "utf8").trim();
    } catch (err) {
      throw new ConfigError(
        `${name}_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
    }
    if (!value) throw new ConfigError(`${name}_FILE: ${path} is empty`);
  }
  if (!value)
    throw new ConfigError(
      `storage_url is s3://: set ${name} or ${name}_FILE (credentials are never in the config file)`,
    );
  if (/\s/.test(value)) throw new ConfigError(`${name}: contains whitespace`);
  return value;
}
