import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { startFunded } from "../helpers/api.ts";
import { startMockOpenAI } from "../helpers/mock-openai.ts";
import { billing, startWithMock } from "./helpers.ts";

/**
 * The official `openai` Python SDK (3.22.1) against POST /v1/responses: `responses.create` streamed
 * and not, and the `responses.stream()` helper (openai/lib/streaming/responses/_responses.py, whose
 * get_final_response() needs the terminal response event). The interpreter is GENGATE_PYTHON
 * (`sh scripts/python-env` prints one with the SDK); without it the file is skipped.
 */
const python = process.env.GENGATE_PYTHON;
type Usage = { input_tokens: number; output_tokens: number; total_tokens: number };
interface Probe {
  sdk_version: string;
  create: { id: string; status: string; model: string; text: string; usage: Usage };
  stream: { events: string[]; text: string; id: string; usage: Usage };
  helper: { status: string; text: string; id: string; usage: Usage };
  incomplete: { type: string; status: string; reason: string; id: string; usage: Usage };
  previous: { status: number; code: string; param: string; message: string } | null;
  midstream: { raised: string | null; message?: string; events: string[] };
}

const mock = startMockOpenAI();
let s: Awaited<ReturnType<typeof startFunded>>;
let bill: ReturnType<typeof billing>;
let before: bigint;
let probe: Probe;

describe.skipIf(!python)("the openai Python SDK's responses", () => {
  beforeAll(async () => {
    s = await startWithMock(mock, ["midstream-error"]);
    bill = billing(s);
    before = await bill.balance();
    const proc = Bun.spawn([python!, join(import.meta.dir, "openai_responses_probe.py")], {
      env: { ...process.env, GENGATE_BASE_URL: `${s.url}/v1`, GENGATE_KEY: s.defaultKey! },
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    clearTimeout(timer);
    if (code !== 0) throw new Error(`openai_responses_probe.py exited with ${code}:\n${stderr}`);
    probe = JSON.parse(stdout) as Probe;
  }, 120_000);
  afterAll(() => {
    s?.cleanup();
    mock.stop();
  });

  test("create: output_text and usage", () => {
    expect(probe.create.status).toBe("completed");
    expect(probe.create.model).toBe("sandbox/chat");
    expect(probe.create.text).toStartWith('You said: "Hello from Python"');
    const u = probe.create.usage;
    expect(u.output_tokens).toBeGreaterThan(0);
    expect(u.total_tokens).toBe(u.input_tokens + u.output_tokens);
  });

  test("stream: the events in order, the text, usage on response.completed", () => {
    const { events, text, usage } = probe.stream;
    expect(events[0]).toBe("response.created");
    expect(events.at(-1)).toBe("response.completed");
    expect(events).toContain("response.output_text.done");
    expect(text).toStartWith('You said: "Stream from Python"');
    expect(usage.output_tokens).toBeGreaterThan(0);
  });

  test("responses.stream() helper: get_final_response() assembles the response", () => {
    expect(probe.helper.status).toBe("completed");
    expect(probe.helper.text).toStartWith('You said: "Helper from Python"');
  });

  test("a stream cut at max_output_tokens ends with response.incomplete, reason max_output_tokens", () => {
    expect(probe.incomplete).toMatchObject({
      type: "response.incomplete",
      status: "incomplete",
      reason: "max_output_tokens",
    });
    expect(probe.incomplete.usage.output_tokens).toBe(3);
  });

  test("previous_response_id raises BadRequestError saying conversations are not stored", () => {
    expect(probe.previous).toMatchObject({
      status: 400,
      code: "validation_error",
      param: "previous_response_id",
    });
    expect(probe.previous!.message).toContain("does not store conversations");
  });

  test("a mid-stream upstream failure: response.failed, then the SDK raises APIError", () => {
    expect(probe.midstream.events).toContain("response.failed");
    expect(probe.midstream.raised).toBe("APIError");
    expect(probe.midstream.message).toContain("Nothing was charged");
  });

  test("the ledger moved by exactly the estimates of the calls' usage; each is listed", async () => {
    const calls = [probe.create, probe.stream, probe.helper, probe.incomplete];
    let total = 0n;
    for (const c of calls) {
      const est = (await (
        await s.post("/v1/estimate", {
          model_id: "sandbox/chat",
          input: { input_tokens: c.usage.input_tokens, output_tokens: c.usage.output_tokens },
        })
      ).json()) as { price_usd_micro: string };
      total += BigInt(est.price_usd_micro);
    }
    // The refused previous_response_id call opened nothing and the failed one charged nothing: the
    // four calls are the whole movement (the failed one is listed too, FAILED).
    expect(before - (await bill.balance())).toBe(total);
    const listed = (await (await s.get("/v1/requests")).json()) as { data: { request_id: string }[] };
    expect(listed.data).toHaveLength(calls.length + 1);
    for (const c of calls) expect(listed.data.map((r) => r.request_id)).toContain(c.id.slice("resp_".length));
  });
});
