/** The parts one after another in one new array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** `n` bytes at `o` read as Latin-1 text (format signatures, chunk names); "" when they run past the end. */
export function ascii(b: Uint8Array, o: number, n: number): string {
  if (o + n > b.length) return "";
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(b[o + i]!);
  return s;
}
