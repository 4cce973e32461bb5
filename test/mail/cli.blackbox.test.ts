/**
 * `gengate user invite|reset-password` with [smtp]: the link is printed as always and queued in the
 * data dir's mail outbox; the server sends it (here: at its next start, so nothing is lost while it
 * is down). CI reruns this file against the compiled binary.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runGengate, startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { type SmtpCapture, smtpCapture } from "../helpers/smtp.ts";
import { waitFor } from "../webhooks/helpers.ts";

let smtp: SmtpCapture;
let dataDir = "";
let config = "";
let server: TestServer | null = null;

beforeAll(async () => {
  smtp = await smtpCapture();
  dataDir = tempDir();
  config = join(dataDir, "gengate.toml");
  writeFileSync(
    config,
    `[smtp]\nhost = "127.0.0.1"\nport = ${smtp.port}\ntls = "none"\nfrom = "billing@gengate.test"\n`,
  );
  // A first start creates the data dir; then the server is stopped.
  const first = await startServer({ dataDir });
  await first.stop();
});

afterAll(async () => {
  server?.cleanup();
  await smtp.close();
});

describe("CLI links by email (black box)", () => {
  test("invite with --config: printed, queued, and sent by the server when it starts", async () => {
    const run = await runGengate([
      "user",
      "invite",
      "--email",
      "Cli@Example.com",
      "--data-dir",
      dataDir,
      "--config",
      config,
      "--public-url",
      "https://gen.example.com",
    ]);
    expect(run.code).toBe(0);
    const url = /(https:\/\/gen\.example\.com\/console\/invite\/\S+)/.exec(run.stdout)![1]!;
    expect(run.stdout).toContain("Also queued for email ([smtp]); the running server sends it.");
    const json = await runGengate([
      "user",
      "invite",
      "--email",
      "second@example.com",
      "--data-dir",
      dataDir,
      "--json",
      "--public-url",
      "https://gen.example.com",
    ]);
    // No config given: nothing queued, the JSON is the link alone.
    expect(Object.keys(JSON.parse(json.stdout))).toEqual(["url"]);
    expect(smtp.mails).toHaveLength(0);

    server = await startServer({ dataDir, args: ["--config", config] });
    await waitFor("the queued invite", () => smtp.mails.length === 1, 20_000);
    expect(smtp.mails[0]!.to).toEqual(["cli@example.com"]);
    expect(smtp.mails[0]!.decoded).toContain(url);
  });
});
