import { expect } from "bun:test";
import type { startFunded } from "../helpers/api.ts";

type Funded = Awaited<ReturnType<typeof startFunded>>;

/**
 * What every Responses client test checks of a call's money: the balance moved by exactly what
 * POST /v1/estimate quotes for the tokens the call reported (never above the reservation, nothing
 * left held), and the call is listed in GET /v1/requests as a completed text job.
 */
export function billing(s: Funded) {
  const balance = async () =>
    BigInt(((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro);
  return {
    balance,
    /** Asserts the settlement of response `id` (resp_<request id>) against the balance before it. */
    async settled(
      id: string,
      before: bigint,
      usage: { input_tokens: number; output_tokens: number },
      model = "sandbox/chat",
    ) {
      expect(id).toStartWith("resp_");
      const requestId = id.slice("resp_".length);
      const est = (await (
        await s.post("/v1/estimate", {
          model_id: model,
          input: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens },
        })
      ).json()) as { price_usd_micro: string };
      const after = await balance();
      expect(before - after).toBe(BigInt(est.price_usd_micro));
      const rec = (await (await s.get(`/v1/requests/${requestId}`)).json()) as {
        status: string;
        price: { charged_usd_micro: string; reserved_micro: string };
      };
      expect(rec.status).toBe("COMPLETED");
      expect(rec.price.charged_usd_micro).toBe(est.price_usd_micro);
      expect(BigInt(rec.price.charged_usd_micro)).toBeLessThanOrEqual(BigInt(rec.price.reserved_micro));
      const list = (await (await s.get("/v1/requests")).json()) as { data: { request_id: string }[] };
      expect(list.data.map((r) => r.request_id)).toContain(requestId);
      const account = (await (await s.get("/v1/account")).json()) as { held_micro: string };
      expect(account.held_micro).toBe("0");
    },
  };
}
