import { DomainError } from "../lib/errors.ts";
import { log } from "../lib/log.ts";
import { CallStats } from "./call-stats.ts";
import type { ChatCall, ChatDelta, ChatProvider } from "./chat.ts";
import { type Provider, ProviderError, type ProviderJob, type ProviderResult } from "./types.ts";

export interface CircuitOptions {
  /** Consecutive upstream failures that open the circuit. */
  threshold: number;
  /** How long it stays open before one trial is let through (half-open). */
  cooldownMs: number;
  now?: () => number;
}

type State = "closed" | "open" | "half_open";

/**
 * A provider that keeps failing (capacity or upstream errors, not refused inputs) is marked
 * unhealthy: new submits to its models get 503 capacity_unavailable with Retry-After, without
 * reserving anything, until the cooldown ends; then one job is let through and its outcome
 * closes or reopens the circuit.
 */
export class CircuitBreaker {
  private failures = 0;
  private openedAt = 0;
  private state: State = "closed";
  private readonly now: () => number;
  /** The recent calls' outcomes and durations (the operator's health figures). */
  readonly stats: CallStats;

  constructor(
    readonly provider: string,
    private readonly o: CircuitOptions = { threshold: 5, cooldownMs: 30_000 },
  ) {
    this.now = o.now ?? Date.now;
    this.stats = new CallStats(this.now);
  }

  /** Throws 503 capacity_unavailable while open; lets traffic through when closed or half-open. */
  check(): void {
    if (this.state !== "open") return;
    const left = this.openedAt + this.o.cooldownMs - this.now();
    if (left <= 0) {
      this.state = "half_open";
      return;
    }
    throw new DomainError(
      "capacity_unavailable",
      `The upstream provider of this model is unavailable; retry in ${Math.ceil(left / 1000)} s. Nothing was reserved.`,
      {
        retryAfterSeconds: left / 1000,
      },
    );
  }

  /** Open and still cooling down (check() would throw), without check()'s move to half-open. */
  isOpen(): boolean {
    return this.state === "open" && this.openedAt + this.o.cooldownMs > this.now();
  }

  success(): void {
    if (this.state !== "closed") log("info", "provider healthy again", { provider: this.provider });
    this.failures = 0;
    this.state = "closed";
  }

  failure(): void {
    this.failures++;
    if (this.state === "half_open" || (this.state === "closed" && this.failures >= this.o.threshold)) {
      this.state = "open";
      this.openedAt = this.now();
      log("warn", "provider marked unhealthy", { provider: this.provider, failures: this.failures });
    }
  }

  view() {
    return { state: this.state, consecutive_failures: this.failures, healthy: this.state === "closed" };
  }
}

/** The circuit of a provider, made on first use (circuits outlive reloads). */
export function circuitFor(circuits: Map<string, CircuitBreaker>, name: string): CircuitBreaker {
  let c = circuits.get(name);
  if (!c) {
    c = new CircuitBreaker(name);
    circuits.set(name, c);
  }
  return c;
}

/** Wraps a provider so every run's outcome feeds its circuit. */
export class GuardedProvider implements Provider {
  constructor(
    private readonly inner: Provider,
    private readonly circuit: CircuitBreaker,
  ) {}

  get name() {
    return this.inner.name;
  }

  resumable(job: { upstreamId: string | null }): boolean {
    return this.inner.resumable(job);
  }

  async run(job: ProviderJob): Promise<ProviderResult> {
    const started = performance.now();
    const took = () => performance.now() - started;
    try {
      const result = await this.inner.run(job);
      this.circuit.success();
      this.circuit.stats.record(true, took());
      return result;
    } catch (err) {
      if (job.signal.aborted) throw err; // time limit or shutdown: not the upstream's fault
      const answered = err instanceof ProviderError && err.kind === "input";
      if (answered)
        this.circuit.success(); // it answered
      else this.circuit.failure();
      this.circuit.stats.record(answered, took());
      throw err;
    }
  }
}

/**
 * Wraps a chat provider so each call feeds its circuit: the first piece of a reply (or its
 * failure) is the outcome. A refused input is an answer; an abort (client gone, time limit,
 * shutdown) is not the upstream's fault.
 */
export class GuardedChatProvider implements ChatProvider {
  constructor(
    private readonly inner: ChatProvider,
    private readonly circuit: CircuitBreaker,
  ) {}

  get name() {
    return this.inner.name;
  }

  async *chat(call: ChatCall): AsyncIterable<ChatDelta> {
    const started = performance.now();
    const iterator = this.inner.chat(call)[Symbol.asyncIterator]();
    let first: IteratorResult<ChatDelta>;
    try {
      first = await iterator.next();
      this.circuit.success();
      this.circuit.stats.record(true, performance.now() - started); // time to the first piece
    } catch (err) {
      const answered = err instanceof ProviderError && err.kind === "input";
      if (!answered && !call.signal.aborted) this.circuit.failure();
      if (!call.signal.aborted) this.circuit.stats.record(answered, performance.now() - started);
      throw err;
    }
    for (let r = first; !r.done; r = await iterator.next()) yield r.value;
  }
}
