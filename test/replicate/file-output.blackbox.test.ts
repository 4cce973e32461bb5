/**
 * Over https the replicate client makes each output link a FileOutput (node_modules/replicate
 * index.js run: `https:` or `data:` strings become createFileOutput, lib/stream.js), a stream of
 * the file that also gives its URL: gengate's signed links download without the key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Replicate from "replicate";
import { startServer, type TestServer } from "../helpers/server.ts";

const FIXTURES = resolve(import.meta.dir, "../compat/fixtures");
const CERT = join(FIXTURES, "tls.test.crt");
const CA = readFileSync(CERT, "utf8");
const https = ((input: string | URL | Request, init: RequestInit = {}) =>
  fetch(input, { ...init, tls: { ca: CA } })) as typeof fetch;

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ args: ["--tls-cert", CERT, "--tls-key", join(FIXTURES, "tls.test.key")] });
  const account = (await (
    await https(`${s.url}/v1/account`, { headers: { authorization: `Key ${s.defaultKey}` } })
  ).json()) as { id: string };
  await https(`${s.url}/admin/v1/accounts/${account.id}/credit`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ amount: "5", reason: "replicate FileOutput test" }),
  });
});
afterAll(() => s.cleanup());

describe("replicate run over https", () => {
  test("an image model's output is a list of FileOutput that reads as the PNG", async () => {
    const replicate = new Replicate({ auth: s.defaultKey!, baseUrl: `${s.url}/v1`, fetch: https });
    const output = (await replicate.run("sandbox/image", {
      input: { prompt: "a fox", width: 64, height: 64 },
    })) as (ReadableStream & { url(): URL; blob(): Promise<Blob> })[];
    expect(output.length).toBe(1);
    const file = output[0]!;
    expect(file).toBeInstanceOf(ReadableStream);
    expect(file.url().href).toStartWith(`${s.url}/v1/requests/`);
    const bytes = new Uint8Array(await (await file.blob()).arrayBuffer());
    expect([...bytes.slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });
});
