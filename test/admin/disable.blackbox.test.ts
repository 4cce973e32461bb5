/**
 * Disabling against the real server (the compiled binary in CI): `gengate account disable` on the
 * running server's data dir refuses the account's key at once (401, the message says why) and the
 * admin API's enable lets it work again; `gengate user disable` ends a person's session and refuses
 * their sign-in, `gengate user enable` lets them sign in again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runGengate, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let dd: string[];
let accountId: string;
beforeAll(async () => {
  server = await startServer();
  dd = ["--data-dir", server.dataDir];
  accountId = ((await (await server.fetch("/v1/account")).json()) as { id: string }).id;
});
afterAll(() => server?.cleanup());

async function cli(args: string[]) {
  const r = await runGengate([...args, ...dd]);
  if (r.code !== 0) throw new Error(`gengate ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r;
}

const PASSWORD = "correct horse battery";

/** A console form post as our pages send it (Origin of the server); the session cookie, if any. */
async function form(path: string, fields: Record<string, string>, cookie?: string) {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: new URL(server.url).origin,
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  });
  const set = res.headers.getSetCookie().find((c) => c.startsWith("gengate_session="));
  return { res, cookie: set?.split(";")[0] ?? null };
}

describe("disable and enable on a running server", () => {
  test("an account disabled from the CLI: its key is 401 at once; enabled by the admin API it works", async () => {
    const estimate = () =>
      server.fetch("/v1/estimate", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model_id: "sandbox/image" }),
      });
    // Authenticated (and cached) before the change.
    expect((await estimate()).status).toBe(200);
    const out = JSON.parse(
      (await cli(["account", "disable", accountId, "--reason", "chargeback", "--json"])).stdout,
    ) as { disabled_reason: string; disabled_at: string | null };
    expect(out.disabled_reason).toBe("chargeback");
    expect(out.disabled_at).not.toBeNull();
    const refused = await estimate();
    expect(refused.status).toBe(401);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.message).toContain("account is disabled");

    // A reason is required by the CLI too.
    expect((await runGengate(["account", "disable", accountId, ...dd])).code).not.toBe(0);

    const res = await server.fetch(`/admin/v1/accounts/${accountId}/enable`, {
      method: "POST",
      key: null,
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { disabled_at: string | null }).disabled_at).toBeNull();
    expect((await estimate()).status).toBe(200);
  });

  test("a person disabled from the CLI is signed out and cannot sign in; enabled, they can", async () => {
    const { url } = JSON.parse(
      (
        await cli([
          "user",
          "invite",
          "--email",
          "ann@example.com",
          "--account",
          accountId,
          "--role",
          "member",
          "--json",
        ])
      ).stdout,
    ) as { url: string };
    const accepted = await form(new URL(url).pathname, { password: PASSWORD });
    expect(accepted.res.status).toBe(303);
    const cookie = accepted.cookie!;
    const page = (c: string) =>
      fetch(`${server.url}/console`, { redirect: "manual", headers: { cookie: c } });
    expect((await page(cookie)).status).toBe(200);

    await cli(["user", "disable", "--email", "ann@example.com", "--reason", "left"]);
    expect((await page(cookie)).status).toBe(303);
    const signIn = () => form("/console/login", { email: "ann@example.com", password: PASSWORD });
    expect((await signIn()).res.status).toBe(401);

    const human = (await cli(["user", "enable", "--email", "ann@example.com"])).stdout;
    expect(human).toContain("may sign in again");
    const again = await signIn();
    expect(again.res.status).toBe(303);
    expect((await page(again.cookie!)).status).toBe(200);
  });
});
