/** A single byte range resolved against a size: [start, end] inclusive. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parses a Range header for one range (RFC 9110): "bytes=0-99", "bytes=100-", "bytes=-500".
 * Returns null when there is no usable Range header (serve the whole file), "unsatisfiable" when
 * it cannot be served (416). Multiple ranges are answered with the whole file, as RFC 9110 allows.
 */
export function parseRange(header: string | null, size: number): ByteRange | null | "unsatisfiable" {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return header.trim().startsWith("bytes=") && header.includes(",") ? null : "unsatisfiable";
  const [, a, b] = m as unknown as [string, string, string];
  if (a === "" && b === "") return "unsatisfiable";
  if (a === "") {
    const suffix = Number(b);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === "" ? size - 1 : Math.min(Number(b), size - 1);
  if (!Number.isSafeInteger(start) || start >= size || end < start) return "unsatisfiable";
  return { start, end };
}
