/**
 * Resolves on the next event-loop turn, after pending I/O callbacks: long housekeeping loops
 * await it between batches so requests are served in between.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
