/**
 * The operator pages' tests' setup (operators-pages*.test.ts): a funded account, an operator signed
 * in, and two calls with an API key (a queued image job, an estimate).
 */
import { expect } from "bun:test";
import { json } from "../helpers/context.ts";
import { consoleApp } from "./helpers.ts";

export async function operatorSetup() {
  const c = await consoleApp();
  await c.ctx.ledger.topUp(c.account.id, 10_000_000n, null);
  await c.person("op@example.com", "owner", true);
  const op = await c.signedIn("op@example.com");
  await op.page("/console/admin");
  const submit = async (
    key: string,
    input: Record<string, unknown> = { prompt: "p" },
    model = "sandbox/image",
  ) => {
    const res = await c.request(`/v1/queue/${model}`, {
      method: "POST",
      key,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(input),
    });
    expect(res.status).toBe(202);
    return (await json(res)).request_id as string;
  };
  const estimate = (key: string) =>
    c.request("/v1/estimate", {
      method: "POST",
      key,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model_id: "sandbox/image" }),
    });
  return { c, op, submit, estimate };
}
