import { Cron } from "croner";
import type { FxRefresh } from "../config/schema.ts";
import type { Leadership } from "../db/leader.ts";
import { UTC_NO_OVERLAP } from "../lib/cron.ts";
import { errorFields, log } from "../lib/log.ts";
import { parseRate } from "../pricing/fx.ts";
import type { FxStore } from "./store.ts";

/**
 * Fetches the USD->RUB rate from the operator's URL. The body is either a bare number or JSON
 * with the rate at `field` (a dot path such as "rates.RUB"). The value is re-read as decimal text
 * and parsed by parseRate, so it is validated like a rate typed by the operator.
 */
export async function fetchRate(refresh: FxRefresh, fetchImpl: typeof fetch = fetch): Promise<bigint> {
  const res = await fetchImpl(refresh.url, { signal: AbortSignal.timeout(15_000), redirect: "error" });
  if (!res.ok) throw new Error(`rate source answered ${res.status}`);
  const text = (await res.text()).trim();
  let value: unknown = text;
  if (refresh.field) {
    value = JSON.parse(text);
    for (const part of refresh.field.split(".")) {
      value =
        value !== null && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined;
    }
  }
  if (typeof value === "number" && Number.isFinite(value)) value = String(value);
  if (typeof value !== "string") throw new Error(`no rate at "${refresh.field ?? "(body)"}"`);
  return parseRate(value);
}

export async function refreshRateOnce(
  refresh: FxRefresh,
  fx: FxStore,
  fetchImpl?: typeof fetch,
): Promise<bigint | null> {
  try {
    const rate = await fetchRate(refresh, fetchImpl);
    await fx.set("RUB", rate, refresh.url);
    log("info", "fx rate refreshed", { currency: "RUB", rate_micro: rate.toString() });
    return rate;
  } catch (err) {
    // Keep the previous rate: a stale rate is better than refusing every RUB reservation.
    log("warn", "fx rate refresh failed; keeping the previous rate", {
      currency: "RUB",
      ...errorFields(err),
    });
    return null;
  }
}

/**
 * The scheduled refresh (croner, UTC, no overlapping runs), on one instance at a time: the leader
 * of "fx-refresh" (src/db/leader.ts). Returns the job to stop it.
 */
export function scheduleFxRefresh(
  refresh: FxRefresh,
  fx: FxStore,
  leadership: Pick<Leadership, "run">,
): Cron {
  return new Cron(refresh.cron, { ...UTC_NO_OVERLAP, name: "fx-refresh" }, async () => {
    try {
      await leadership.run("fx-refresh", () => refreshRateOnce(refresh, fx));
    } catch (err) {
      log("error", "fx-refresh failed", errorFields(err));
    }
  });
}
