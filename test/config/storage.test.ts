import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, readConfigFile } from "../../src/config/load.ts";
import { storageSettingsFrom } from "../../src/config/storage.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir();
const write = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const creds = { AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "secret/key+1" };

describe("storage_url and [storage.s3]", () => {
  test("absent or file: is the data dir", () => {
    expect(storageSettingsFrom({}, null)).toEqual({ kind: "file" });
    expect(storageSettingsFrom({ GENGATE_STORAGE_URL: "file:" }, null)).toEqual({ kind: "file" });
    expect(storageSettingsFrom({}, { server: { storage_url: "file:" } })).toEqual({ kind: "file" });
  });

  test("s3://bucket/prefix with the config's endpoint, region and path style; credentials from the environment", () => {
    const file = readConfigFile(
      write(
        "s3.toml",
        `[server]\nstorage_url = "s3://media-bucket/gengate/prod/"\n[storage.s3]\nendpoint = "https://s3.example.net/"\nregion = "eu-west-3"\npath_style = false\n`,
      ),
    );
    expect(storageSettingsFrom(creds, file)).toEqual({
      kind: "s3",
      bucket: "media-bucket",
      prefix: "gengate/prod/",
      endpoint: "https://s3.example.net",
      region: "eu-west-3",
      pathStyle: false,
      accessKeyId: "AKID",
      secretAccessKey: "secret/key+1",
    });
  });

  test("defaults: no prefix, region from AWS_REGION else us-east-1, path style when an endpoint is given", () => {
    const bare = storageSettingsFrom({ ...creds, GENGATE_STORAGE_URL: "s3://bkt" }, null);
    expect(bare).toMatchObject({
      bucket: "bkt",
      prefix: "",
      endpoint: null,
      region: "us-east-1",
      pathStyle: false,
    });
    expect(
      storageSettingsFrom({ ...creds, GENGATE_STORAGE_URL: "s3://bkt", AWS_REGION: "ap-south-1" }, null),
    ).toMatchObject({ region: "ap-south-1" });
    const withEndpoint = storageSettingsFrom(
      { ...creds, GENGATE_STORAGE_URL: "s3://bkt/p" },
      { storage: { s3: { endpoint: "http://127.0.0.1:9000" } } },
    );
    expect(withEndpoint).toMatchObject({ prefix: "p/", pathStyle: true });
  });

  test("the environment wins over the config file", () => {
    const s = storageSettingsFrom(
      { ...creds, GENGATE_STORAGE_URL: "s3://from-env" },
      { server: { storage_url: "s3://from-file" } },
    );
    expect(s).toMatchObject({ kind: "s3", bucket: "from-env" });
    expect(
      storageSettingsFrom({ GENGATE_STORAGE_URL: "file:" }, { server: { storage_url: "s3://x" } }),
    ).toEqual({
      kind: "file",
    });
  });

  test("credentials from *_FILE", () => {
    const id = write("id", "AKIDFILE\n");
    const secret = write("secret", "from-a-file\n");
    const s = storageSettingsFrom(
      { GENGATE_STORAGE_URL: "s3://bkt", AWS_ACCESS_KEY_ID_FILE: id, AWS_SECRET_ACCESS_KEY_FILE: secret },
      null,
    );
    expect(s).toMatchObject({ accessKeyId: "AKIDFILE", secretAccessKey: "from-a-file" });
  });

  test.each([
    ["a URL of another scheme", { GENGATE_STORAGE_URL: "gs://bkt", ...creds }, /neither file: nor s3:/],
    [
      "a bucket name that is not one",
      { GENGATE_STORAGE_URL: "s3://Bad_Bucket", ...creds },
      /neither file: nor s3:/,
    ],
    ["a prefix with ..", { GENGATE_STORAGE_URL: "s3://bkt/a/../b", ...creds }, /"\." or "\.\." segment/],
    ["a prefix with an empty segment", { GENGATE_STORAGE_URL: "s3://bkt/a//b", ...creds }, /empty/],
    ["no access key", { GENGATE_STORAGE_URL: "s3://bkt", AWS_SECRET_ACCESS_KEY: "x" }, /AWS_ACCESS_KEY_ID/],
    ["no secret key", { GENGATE_STORAGE_URL: "s3://bkt", AWS_ACCESS_KEY_ID: "x" }, /AWS_SECRET_ACCESS_KEY/],
    [
      "both a key and its file",
      { GENGATE_STORAGE_URL: "s3://bkt", ...creds, AWS_ACCESS_KEY_ID_FILE: "/nonexistent" },
      /not both/,
    ],
    [
      "an unreadable key file",
      { GENGATE_STORAGE_URL: "s3://bkt", AWS_ACCESS_KEY_ID_FILE: "/nonexistent", AWS_SECRET_ACCESS_KEY: "x" },
      /cannot read \/nonexistent/,
    ],
  ] as const)("refused: %s", (_name, env, message) => {
    expect(() => storageSettingsFrom(env, null)).toThrow(ConfigError);
    expect(() => storageSettingsFrom(env, null)).toThrow(message);
  });

  test("[storage.s3] without an s3:// storage_url, and unknown keys in it, are config errors", () => {
    expect(() => storageSettingsFrom({}, { storage: { s3: { region: "eu-west-1" } } })).toThrow(
      /only with storage_url/,
    );
    expect(() => readConfigFile(write("bad.toml", `[storage.s3]\nsecret_access_key = "inline"\n`))).toThrow(
      ConfigError,
    );
    expect(() => readConfigFile(write("bad2.toml", `[server]\nstorage_url = ""\n`))).toThrow(ConfigError);
  });
});
