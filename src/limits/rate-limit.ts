import { ApiError } from "../http/errors.ts";

/**
 * Writes per key per minute, in fixed one-minute windows aligned to the key's first write.
 * In memory: one process serves the API. Reads and status polls never come here.
 * Headers follow the IETF RateLimit draft (structured fields):
 *   RateLimit-Policy: "writes";q=120;w=60   RateLimit: "writes";r=37;t=23
 */
export class WriteRateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one write; throws 429 rate_limited when over. Returns the headers to send. */
  hit(keyId: string, limit: number): Record<string, string> {
    const now = this.now();
    let w = this.windows.get(keyId);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, count: 0 };
      this.windows.set(keyId, w);
      if (this.windows.size > 100_000) this.prune(now);
    }
    const reset = Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
    const policy = `"writes";q=${limit};w=60`;
    if (w.count >= limit) {
      throw new ApiError(
        "rate_limited",
        `Too many writes for this key: ${limit} per minute. Retry in ${reset} s.`,
        {
          headers: {
            "retry-after": String(reset),
            "ratelimit-policy": policy,
            ratelimit: `"writes";r=0;t=${reset}`,
          },
        },
      );
    }
    w.count++;
    return { "ratelimit-policy": policy, ratelimit: `"writes";r=${limit - w.count};t=${reset}` };
  }

  private prune(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(k);
  }
}
