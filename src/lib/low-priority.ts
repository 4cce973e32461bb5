/**
 * Work at a lower priority than the API: the console's pages and exports step aside for requests
 * that arrived meanwhile (a submit, a chat call), so the money path does not wait behind a page.
 *
 * bun:sqlite never yields, so a page whose every `await` is a store call runs as ONE synchronous
 * block (0.3-5 ms at 10,000 past requests) and each submit that arrives meanwhile waits for all of
 * it, three times over (its handler, its group commit's flush, its answer after the WAL sync each
 * need a turn of the event loop). A page awaits `lowPriorityTurn()` before each heavy step (its
 * session, its reads, its rendering): the next turn of the event loop (`setImmediate`, so every
 * I/O callback that is ready runs first: new requests, the WAL sync's completion), and then, if a
 * request arrived during that turn, one more turn, so the work it queued for the check phase (the
 * group commit's flush is a `setImmediate` too) runs before the page's next step. Never starves:
 * a step waits at most `LOW_PRIORITY_MAX_TURNS` turns however busy the API is.
 *
 * Arrivals are counted by the app's onRequest hook (`requestArrived`, src/app/app.ts): one integer
 * increment per request.
 */
import { nextTurn } from "./next-turn.ts";

/**
 * At most this many turns per step. The bench's 4 submit connections bring a request on most
 * turns while they run (docs/performance.md "Issue 36: pages at lower priority"); a turn with
 * nothing ready costs a few microseconds, so 4 keeps a page's wait bounded by four other
 * requests' steps per step, not by the API's load.
 */
export const LOW_PRIORITY_MAX_TURNS = 4;

let arrivals = 0;

/** Called once per request as it arrives (before any handler runs). */
export function requestArrived(): void {
  arrivals++;
}

/**
 * Resolves after the API work that is ready has run: one turn of the event loop, then more (at
 * most LOW_PRIORITY_MAX_TURNS in all) while requests keep arriving.
 */
export async function lowPriorityTurn(): Promise<void> {
  for (let turns = 1; ; turns++) {
    const seen = arrivals;
    await nextTurn();
    if (arrivals === seen || turns >= LOW_PRIORITY_MAX_TURNS) return;
  }
}
