import type { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AccountStore } from "../../src/accounts/store.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import type { Resolver } from "../../src/webhooks/url-policy.ts";
import { sqlOf } from "../helpers/sql.ts";

let accounts = 0;

/** A migrated database (file-backed when a path is given) with one account. */
export async function webhookDb(path = ":memory:"): Promise<{ db: Database; accountId: string }> {
  const db = openDatabase(path);
  migrate(db);
  const { account } = await new AccountStore(sqlOf(db)).createAccount(`webhooks-${++accounts}`, "USD");
  return { db, accountId: account.id };
}

export function tempFile(name: string): string {
  return join(mkdtempSync(join(tmpdir(), "gengate-webhooks-")), name);
}

export interface Hit {
  path: string;
  method: string;
  headers: Headers;
  body: string;
}

/**
 * A local HTTP receiver on 127.0.0.1 (port 0) that records every request it gets. The handler
 * decides the answer from the path and the hit number (1-based, per path).
 */
export function receiver(handler: (path: string, n: number) => Response | Promise<Response> = () => ok()) {
  const hits: Hit[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      hits.push({ path, method: req.method, headers: req.headers, body: await req.text() });
      return handler(path, hits.filter((h) => h.path === path).length);
    },
  });
  return {
    server,
    hits,
    port: server.port as number,
    url: (path = "/hook") => `http://127.0.0.1:${server.port}${path}`,
    count: (path: string) => hits.filter((h) => h.path === path).length,
    stop: () => server.stop(true),
  };
}

export const ok = (status = 200) => new Response("ok", { status });

/** Answers nothing, ever: the request hangs until the client gives up. */
export const never = () => new Promise<Response>(() => {});

export const LOOPBACK_ALLOWED = { allowPrivateCidrs: ["127.0.0.0/8"] };
export const NOTHING_ALLOWED = { allowPrivateCidrs: [] as string[] };

/** A resolver from a fixed table; counts calls per name. Unknown names fail like NXDOMAIN. */
export function fakeResolver(table: Record<string, string[]>): Resolver & { calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const fn = async (host: string) => {
    calls[host] = (calls[host] ?? 0) + 1;
    const answer = table[host];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return answer;
  };
  return Object.assign(fn, { calls });
}

/** Polls until the predicate holds; fails the test with `what` after the deadline. */
export async function waitFor(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  deadlineMs = 3000,
): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await Bun.sleep(5);
  }
}

export function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
