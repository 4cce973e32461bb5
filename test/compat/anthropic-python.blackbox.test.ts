import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { startFunded } from "../helpers/api.ts";
import { runPythonProbe } from "../helpers/python-probe.ts";

/**
 * The official `anthropic` Python SDK (PyPI, 1.13.0) against gengate's Messages door, as a Python
 * developer uses it: base_url = the server's origin, api_key = a gengate key (sent as x-api-key).
 * anthropic_probe.py makes the calls and prints what it saw. The interpreter is GENGATE_PYTHON
 * (`sh scripts/python-env` prints one with the SDK installed); without it the file is skipped.
 */
const python = process.env.GENGATE_PYTHON;

type Usage = { input_tokens: number; output_tokens: number };
type Msg = {
  id: string;
  type: string;
  role: string;
  model: string;
  text: string;
  stop_reason: string;
  usage: Usage;
};
type Err = {
  class: string;
  status: number;
  type: string | null;
  code: string | null;
  message: string | null;
  should_retry: string | null;
} | null;
interface Probe {
  sdk_version: string;
  count: number;
  create: Msg;
  stream: { text: string; final: Msg };
  raw_stream: { id: string; events: string[]; text: string; usage: Usage };
  idempotent: { first: Msg; again: Msg };
  conflict: Err;
  image_block: Err;
  media_model: Err;
  bad_key: Err;
  broke: Err;
}

let s: Awaited<ReturnType<typeof startFunded>>;
let probe: Probe;
let probeError: string | null = null;
let before = 0n;
let after = 0n;
const balance = async () =>
  BigInt(((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro);
const estimate = async (u: Usage) =>
  BigInt(
    (
      (await (
        await s.post("/v1/estimate", {
          model_id: "sandbox/chat",
          input: { input_tokens: u.input_tokens, output_tokens: u.output_tokens },
        })
      ).json()) as { price_usd_micro: string }
    ).price_usd_micro,
  );

describe.skipIf(!python)("the anthropic Python SDK against gengate", () => {
  beforeAll(async () => {
    if (!existsSync(python!))
      throw new Error(`GENGATE_PYTHON=${python} does not exist; create it with: sh scripts/python-env`);
    s = await startFunded();
    const created = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "broke", currency: "USD", credit: "0.000001" }),
    });
    const { key: brokeKey } = (await created.json()) as { key: string };
    before = await balance();
    const ran = await runPythonProbe<Probe>(python!, "anthropic_probe.py", {
      GENGATE_URL: s.url,
      GENGATE_KEY: s.defaultKey!,
      GENGATE_BROKE_KEY: brokeKey,
    });
    probeError = ran.error;
    if (ran.probe) probe = ran.probe;
    after = await balance();
  }, 120_000);
  afterAll(() => s?.cleanup());

  test("the probe ran to the end", () => {
    expect(probeError).toBeNull();
    expect(probe.sdk_version).toMatch(/^\d+\.\d+/);
  });

  test("messages.create: a message whose usage is what count_tokens said, listed in /v1/requests", async () => {
    expect(probe.create).toMatchObject({
      type: "message",
      role: "assistant",
      model: "sandbox/chat",
      stop_reason: "max_tokens",
      usage: { input_tokens: probe.count, output_tokens: 12 },
    });
    expect(probe.create.text).toStartWith('You said: "Hello from Python"');
    const listed = (await (await s.get("/v1/requests?limit=100")).json()) as {
      data: { request_id: string }[];
    };
    expect(listed.data.map((r) => r.request_id)).toContain(probe.create.id.slice("msg_".length));
  });

  test("messages.stream() and create(stream=True): Anthropic's events, the same text as the plain call", () => {
    expect(probe.stream.final.text).toBe(probe.stream.text);
    expect(probe.create.text).toStartWith(probe.stream.text);
    expect(probe.stream.final.usage.output_tokens).toBe(7);
    expect(probe.raw_stream.events.slice(0, 2)).toEqual(["message_start", "content_block_start"]);
    expect(probe.raw_stream.events.slice(-3)).toEqual([
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(probe.create.text).toStartWith(probe.raw_stream.text);
    expect(probe.raw_stream.usage.output_tokens).toBe(5);
  });

  test("an Idempotency-Key replays the message; another body under it is a ConflictError not retried", () => {
    expect(probe.idempotent.again).toEqual(probe.idempotent.first);
    expect(probe.conflict).toMatchObject({
      class: "ConflictError",
      status: 409,
      code: "idempotency_conflict",
      should_retry: "false",
    });
  });

  test("the ledger moved by exactly the estimate of each billed call's usage (the replay charged once)", async () => {
    let expected = 0n;
    for (const m of [probe.create, probe.stream.final, probe.raw_stream, probe.idempotent.first])
      expected += await estimate(m.usage);
    expect(before - after).toBe(expected);
  });

  test("refusals are the SDK's typed exceptions with gengate's code", () => {
    expect(probe.image_block).toMatchObject({ class: "BadRequestError", status: 400, code: "bad_messages" });
    expect(probe.image_block!.message).toContain("text blocks only");
    expect(probe.media_model).toMatchObject({ class: "BadRequestError", code: "unknown_model" });
    expect(probe.media_model!.message).toContain("POST /v1/queue/sandbox/image");
    expect(probe.bad_key).toMatchObject({
      class: "AuthenticationError",
      status: 401,
      type: "authentication_error",
      code: "unauthorized",
    });
    // The Python SDK has no class for 402: APIStatusError, billing_error, the billing page named.
    expect(probe.broke).toMatchObject({
      status: 402,
      type: "billing_error",
      code: "insufficient_balance",
      should_retry: "false",
    });
    expect(probe.broke!.message).toContain("/console/billing");
  });
});
