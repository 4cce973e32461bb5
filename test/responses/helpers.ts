import { expect } from "bun:test";
import { startFunded } from "../helpers/api.ts";
import type { MockOpenAI } from "../helpers/mock-openai.ts";

type Funded = Awaited<ReturnType<typeof startFunded>>;

/**
 * What every Responses client test checks of a call's money: the balance moved by exactly what
 * POST /v1/estimate quotes for the tokens the call reported (never above the reservation, nothing
 * left held), and the call is listed in GET /v1/requests as a completed text job.
 */
export function billing(s: Funded) {
  const balance = async () =>
    BigInt(((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro);
  const estimate = async (model: string, input: Record<string, number>) =>
    (
      (await (await s.post("/v1/estimate", { model_id: model, input })).json()) as {
        price_usd_micro: string;
      }
    ).price_usd_micro;
  return {
    balance,
    /**
     * Asserts the call held what POST /v1/estimate quotes for its prompt and max_output_tokens
     * (absent: the estimate's own 4096 rule, as chat's). The sandbox counts the prompt exactly, so
     * its usage's input_tokens is the reservation's prompt.
     */
    async held(id: string, inputTokens: number, maxOutput?: number, model = "sandbox/chat") {
      const rec = (await (await s.get(`/v1/requests/${id.slice("resp_".length)}`)).json()) as {
        price: { reserved_micro: string };
      };
      const input = {
        input_tokens: inputTokens,
        ...(maxOutput === undefined ? {} : { output_tokens: maxOutput }),
      };
      expect(rec.price.reserved_micro).toBe(await estimate(model, input));
    },
    /** Asserts the settlement of response `id` (resp_<request id>) against the balance before it. */
    async settled(
      id: string,
      before: bigint,
      usage: { input_tokens: number; output_tokens: number },
      model = "sandbox/chat",
    ) {
      expect(id).toStartWith("resp_");
      const requestId = id.slice("resp_".length);
      const price = await estimate(model, {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
      });
      const after = await balance();
      expect(before - after).toBe(BigInt(price));
      const rec = (await (await s.get(`/v1/requests/${requestId}`)).json()) as {
        status: string;
        price: { charged_usd_micro: string; reserved_micro: string };
      };
      expect(rec.status).toBe("COMPLETED");
      expect(rec.price.charged_usd_micro).toBe(price);
      expect(BigInt(rec.price.charged_usd_micro)).toBeLessThanOrEqual(BigInt(rec.price.reserved_micro));
      const list = (await (await s.get("/v1/requests")).json()) as { data: { request_id: string }[] };
      expect(list.data.map((r) => r.request_id)).toContain(requestId);
      const account = (await (await s.get("/v1/account")).json()) as { held_micro: string };
      expect(account.held_micro).toBe("0");
    },
  };
}

/**
 * A funded server whose text models `mock/<name>` are served by the mock OpenAI-compatible upstream
 * (test/helpers/mock-openai.ts: the name picks its behaviour), $1 / $2 per 1M tokens, context 8192.
 */
export async function startWithMock(mock: MockOpenAI, names: string[]): Promise<Funded> {
  process.env.MOCK_UPSTREAM_KEY = "sk-upstream-secret";
  const model = (name: string) =>
    `[[models]]\nid = "mock/${name}"\nkind = "text"\nprovider = "mock"\nupstream_model = "${name}"\ninput_price_usd_micro = 1000000\noutput_price_usd_micro = 2000000\ncontext = 8192\n`;
  return await startFunded(
    [
      `[providers.mock]\ntype = "openai"\nbase_url = "${mock.url}"\napi_key_env = "MOCK_UPSTREAM_KEY"\n`,
      ...names.map(model),
    ].join("\n"),
  );
}
