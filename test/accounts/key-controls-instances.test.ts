/**
 * Key controls apply from the next request on, on every instance (docs/scale-out.md): two apps on
 * one database, a change made through one's API, the other's first request after it (SQLite: its
 * data_version read; PostgreSQL: scope "keys" announced, within the 1 s of the contract).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { openAppInstances } from "../helpers/app-instances.ts";
import { dialects } from "../helpers/postgres.ts";

const CONTRACT_MS = 1_000;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const send = (method: string, body: unknown, key?: string) => ({
  method,
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
  ...(key ? { key } : {}),
});

describe.each(dialects())("key controls across instances on %s", (dialect) => {
  test("a key disabled on A is refused on B; enabled on B it works on A; allowed_models likewise", async () => {
    const apps = await openAppInstances(dialect);
    closers.push(() => apps.close());
    const a = apps.first;
    const b = await apps.add();
    const made = (await (await a.request("/v1/keys", send("POST", { name: "k" }))).json()) as {
      id: string;
      key: string;
    };
    const estimate = (on: typeof a) =>
      on.request("/v1/estimate", send("POST", { model_id: "sandbox/image" }, made.key));
    // Cached on B before the change.
    expect((await estimate(b)).status).toBe(200);
    expect((await a.request(`/v1/keys/${made.id}`, send("PATCH", { disabled: true }))).status).toBe(200);
    if (dialect === "postgres") await Bun.sleep(CONTRACT_MS);
    const refused = await estimate(b);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("disabled");

    expect((await estimate(a)).status).toBe(401);
    expect((await b.request(`/v1/keys/${made.id}`, send("PATCH", { disabled: false }))).status).toBe(200);
    if (dialect === "postgres") await Bun.sleep(CONTRACT_MS);
    expect((await estimate(a)).status).toBe(200);

    const limit = send("PATCH", { allowed_models: ["sandbox/video"] });
    expect((await a.request(`/v1/keys/${made.id}`, limit)).status).toBe(200);
    if (dialect === "postgres") await Bun.sleep(CONTRACT_MS);
    expect((await estimate(b)).status).toBe(403);
  });
});
