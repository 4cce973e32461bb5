/**
 * Deterministic seeding for the sandbox encoders. Every byte they produce is a pure function
 * of (arguments, seed), so the same request always yields the same file.
 */

/** A seed is any number (hashed through its decimal form) or string (e.g. a prompt). */
export type Seed = number | string;

/** 32-bit hash of a seed plus optional salts (FNV-1a over UTF-16 code units, then an avalanche). */
export function hashSeed(seed: Seed, ...salts: string[]): number {
  let h = 0x811c9dc5;
  const text = `${typeof seed}:${String(seed)}${salts.map((s) => `\u0000${s}`).join("")}`;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // murmur3 finaliser so that nearby seeds give unrelated streams.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Small fast PRNG (mulberry32) with a few helpers. Not for anything security related. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  static from(seed: Seed, ...salts: string[]): Rng {
    return new Rng(hashSeed(seed, ...salts));
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform in [min, max). */
  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Integer uniform in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError("Rng.pick: empty list");
    return item;
  }

  /** Approximately normal (Irwin-Hall, 4 terms), mean 0, standard deviation 1. */
  gauss(): number {
    return (this.next() + this.next() + this.next() + this.next() - 2) * Math.sqrt(3);
  }
}
