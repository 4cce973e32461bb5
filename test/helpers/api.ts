import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type TestServer, tempDir } from "./server.ts";

/** Credits the account of the server's Default key through the admin API; returns its id. */
export async function creditDefaultAccount(s: TestServer, amountUsd: string): Promise<string> {
  const account = (await (await s.fetch("/v1/account")).json()) as { id: string };
  const res = await fetch(`${s.url}/admin/v1/accounts/${account.id}/credit`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ amount: amountUsd, reason: "test credit" }),
  });
  if (res.status !== 200) throw new Error(`credit failed: ${res.status} ${await res.text()}`);
  return account.id;
}

/** Starts a server with a config file (TOML text) and credits the default account. */
export async function startFunded(
  configToml = "",
  creditUsd = "100",
  env: Record<string, string> = {},
): Promise<TestServer & { post: Post; get: Get }> {
  const dir = tempDir();
  const config = join(dir, "gengate.toml");
  writeFileSync(config, configToml);
  const s = await startServer({ args: ["--config", config], env });
  await creditDefaultAccount(s, creditUsd);
  const post: Post = (path, body, init = {}) =>
    s.fetch(path, {
      ...init,
      method: init.method ?? "POST",
      headers: { "content-type": "application/json", ...(init.headers as Record<string, string>) },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const get: Get = (path, init = {}) => s.fetch(path, init);
  return Object.assign(s, { post, get });
}

type Init = RequestInit & { key?: string | null };
export type Post = (path: string, body: unknown, init?: Init) => Promise<Response>;
export type Get = (path: string, init?: Init) => Promise<Response>;

export async function pollUntil<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out; last value: ${JSON.stringify(v)}`);
    await Bun.sleep(25);
  }
}
