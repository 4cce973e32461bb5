import { DomainError, type RateLimitState } from "../lib/errors.ts";

/**
 * Writes per key per minute, in fixed one-minute windows aligned to the key's first write.
 * In memory: one process serves the API. Reads and status polls never come here.
 * Headers follow the IETF RateLimit draft (structured fields):
 *   RateLimit-Policy: "writes";q=120;w=60   RateLimit: "writes";r=37;t=23
 */
export class WriteRateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one write; throws rate_limited when over. Returns the window's state (for RateLimit headers). */
  hit(keyId: string, limit: number): RateLimitState {
    const now = this.now();
    let w = this.windows.get(keyId);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, count: 0 };
      this.windows.set(keyId, w);
      if (this.windows.size > 100_000) this.prune(now);
    }
    const reset = Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
    const state = (remaining: number): RateLimitState => ({
      policy: "writes",
      limit,
      windowSeconds: 60,
      remaining,
      resetSeconds: reset,
    });
    if (w.count >= limit) {
      throw new DomainError(
        "rate_limited",
        `Too many writes for this key: ${limit} per minute. Retry in ${reset} s.`,
        { retryAfterSeconds: reset, rateLimit: state(0) },
      );
    }
    w.count++;
    return state(limit - w.count);
  }

  private prune(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(k);
  }
}
