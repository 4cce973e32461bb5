import { makeTestApp } from "../helpers/context.ts";
import { withCodes } from "./services.ts";

/** An in-process app whose clock (epoch seconds) the test moves, with a RUB account besides "default" (USD). */
export async function codesApp() {
  const clock = { now: 1_800_000_000 };
  return await withCodes(await makeTestApp({ now: () => clock.now }), clock);
}
