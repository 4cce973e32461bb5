// The load loop shared by scripts/bench.ts and scripts/bench-scale.ts.

export interface LoopFigures {
  /** Answers per second over the whole run. */
  rps: number;
  p50: number;
  p99: number;
  /** Answers `ok` refused. */
  errors: number;
}

/**
 * `conns` closed loops for `seconds`: each sends request i (a counter shared by the loops), awaits
 * the whole answer, records its latency (ms) and repeats.
 */
export async function closedLoop(
  make: (i: number) => Promise<Response>,
  ok: (r: Response) => boolean,
  seconds: number,
  conns: number,
): Promise<LoopFigures> {
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await make(n++);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (!ok(res)) errors++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return { rps: latencies.length / seconds, p50: q(0.5), p99: q(0.99), errors };
}
