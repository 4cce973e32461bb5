/**
 * A streaming POSIX ustar writer and reader (POSIX.1-1988 "ustar" headers, 512-byte blocks), so an
 * archive of any size passes through a fixed amount of memory and stock `tar` reads and writes it.
 * (Bun.Archive builds and extracts archives in memory only, which does not fit a multi-GB file store.)
 * Supported: regular files and directories with names up to 255 bytes (ustar's name + prefix split)
 * and sizes up to 8 GiB - 1. The writer refuses anything else; the reader reports any other entry
 * type by its raw typeflag so the caller can refuse it.
 */

const BLOCK = 512;
const MAX_SIZE = 8 * 1024 ** 3 - 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export class TarError extends Error {}

export interface TarHeader {
  name: string;
  /** "file", "directory", or the raw typeflag character of anything else. */
  type: string;
  size: number;
  mode: number;
  /** Modification time, unix seconds. */
  mtime: number;
}

function writeString(buf: Uint8Array, offset: number, length: number, value: string): void {
  const bytes = encoder.encode(value);
  if (bytes.length > length) throw new TarError(`tar header field too long: ${value}`);
  buf.set(bytes, offset);
}

function writeOctal(buf: Uint8Array, offset: number, length: number, value: number): void {
  const digits = Math.floor(value)
    .toString(8)
    .padStart(length - 1, "0");
  if (digits.length > length - 1) throw new TarError(`tar header value ${value} does not fit`);
  writeString(buf, offset, length, `${digits}\0`);
}

/** Splits a path into ustar's prefix (155 bytes) and name (100 bytes) at a slash. */
function splitName(path: string): { prefix: string; name: string } {
  if (encoder.encode(path).length <= 100) return { prefix: "", name: path };
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (name && encoder.encode(prefix).length <= 155 && encoder.encode(name).length <= 100)
      return { prefix, name };
  }
  throw new TarError(`path too long for a ustar header: ${path}`);
}

export function encodeHeader(h: TarHeader): Uint8Array {
  if (h.type !== "file" && h.type !== "directory") throw new TarError(`unsupported entry type ${h.type}`);
  if (!Number.isSafeInteger(h.size) || h.size < 0 || h.size > MAX_SIZE)
    throw new TarError(`entry ${h.name}: size ${h.size} out of range`);
  const buf = new Uint8Array(BLOCK);
  const { prefix, name } = splitName(h.name);
  writeString(buf, 0, 100, name);
  writeOctal(buf, 100, 8, h.mode & 0o7777);
  writeOctal(buf, 108, 8, 0); // uid
  writeOctal(buf, 116, 8, 0); // gid
  writeOctal(buf, 124, 12, h.type === "directory" ? 0 : h.size);
  writeOctal(buf, 136, 12, Math.max(0, h.mtime));
  buf.fill(0x20, 148, 156); // the checksum field counts as spaces while summing
  buf[156] = h.type === "directory" ? 0x35 : 0x30;
  writeString(buf, 257, 6, "ustar\0");
  writeString(buf, 263, 2, "00");
  writeString(buf, 345, 155, prefix);
  let sum = 0;
  for (const b of buf) sum += b;
  writeString(buf, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return buf;
}

export type TarSink = (chunk: Uint8Array) => Promise<void> | void;

/** Writes entries to a sink in order; each file's bytes must add up to its declared size. */
export class TarWriter {
  constructor(private readonly sink: TarSink) {}

  async directory(name: string, mode = 0o700, mtime = Math.floor(Date.now() / 1000)): Promise<void> {
    const dir = name.endsWith("/") ? name : `${name}/`;
    await this.sink(encodeHeader({ name: dir, type: "directory", size: 0, mode, mtime }));
  }

  /** Adds a file whose content arrives in chunks. */
  async file(
    header: Omit<TarHeader, "type">,
    content: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<void> {
    await this.sink(encodeHeader({ ...header, type: "file" }));
    let written = 0;
    const chunks = content instanceof Uint8Array ? [content] : content;
    for await (const chunk of chunks) {
      written += chunk.byteLength;
      if (written > header.size)
        throw new TarError(`entry ${header.name}: more bytes than its size ${header.size}`);
      await this.sink(chunk);
    }
    if (written !== header.size)
      throw new TarError(`entry ${header.name}: ${written} bytes instead of ${header.size}`);
    const pad = (BLOCK - (written % BLOCK)) % BLOCK;
    if (pad) await this.sink(new Uint8Array(pad));
  }

  /** The end-of-archive marker: two zero blocks. */
  async finish(): Promise<void> {
    await this.sink(new Uint8Array(BLOCK * 2));
  }
}

function readString(buf: Uint8Array, offset: number, length: number): string {
  const field = buf.subarray(offset, offset + length);
  const end = field.indexOf(0);
  try {
    return decoder.decode(end === -1 ? field : field.subarray(0, end));
  } catch {
    throw new TarError("a tar header holds a name that is not UTF-8");
  }
}

function readOctal(buf: Uint8Array, offset: number, length: number, what: string): number {
  const text = readString(buf, offset, length).trim();
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarError(`tar header: bad ${what} field`);
  const n = Number.parseInt(text, 8);
  if (!Number.isSafeInteger(n)) throw new TarError(`tar header: ${what} out of range`);
  return n;
}

export function decodeHeader(buf: Uint8Array): TarHeader {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : buf[i]!;
  if (readOctal(buf, 148, 8, "checksum") !== sum) throw new TarError("tar header checksum mismatch");
  if (readString(buf, 257, 6).trim() !== "ustar") throw new TarError("not a ustar archive");
  const name = readString(buf, 0, 100);
  const prefix = readString(buf, 345, 155);
  const flag = String.fromCharCode(buf[156]!);
  const type = flag === "0" || flag === "\0" ? "file" : flag === "5" ? "directory" : flag;
  return {
    name: prefix ? `${prefix}/${name}` : name,
    type,
    size: readOctal(buf, 124, 12, "size"),
    mode: readOctal(buf, 100, 8, "mode"),
    mtime: readOctal(buf, 136, 12, "mtime"),
  };
}

/** Reads exact byte counts from a chunked stream. */
class ByteReader {
  private readonly it: AsyncIterator<Uint8Array>;
  private buf: Uint8Array = new Uint8Array(0);

  constructor(source: AsyncIterable<Uint8Array>) {
    this.it = source[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    const next = await this.it.next();
    if (next.done) return false;
    this.buf = this.buf.length === 0 ? next.value : Buffer.concat([this.buf, next.value]);
    return true;
  }

  /** Exactly n bytes, or null at a clean end of stream (nothing buffered). */
  async exact(n: number): Promise<Uint8Array | null> {
    while (this.buf.length < n) {
      if (!(await this.fill())) {
        if (this.buf.length === 0) return null;
        throw new TarError("the archive is truncated");
      }
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /** Between 1 and `max` bytes: what is buffered, or the next chunk. */
  async some(max: number): Promise<Uint8Array> {
    if (this.buf.length === 0 && !(await this.fill())) throw new TarError("the archive is truncated");
    const part = this.buf.subarray(0, Math.min(max, this.buf.length));
    this.buf = this.buf.subarray(part.length);
    return part;
  }
}

export interface TarEntry {
  header: TarHeader;
  /** The entry's bytes; what the caller does not read is skipped before the next entry. */
  body: AsyncGenerator<Uint8Array>;
}

/**
 * Reads entries in order; each entry's body must be read (or abandoned) before the next entry is
 * asked for. Ends at the end-of-archive marker; a stream that ends without one is truncated.
 */
export async function* readTar(source: AsyncIterable<Uint8Array>): AsyncGenerator<TarEntry> {
  const r = new ByteReader(source);
  for (;;) {
    const block = await r.exact(BLOCK);
    if (block === null) throw new TarError("the archive is truncated (no end-of-archive marker)");
    if (block.every((b) => b === 0)) return; // the end marker; what follows is padding
    const header = decodeHeader(block);
    const size = header.type === "directory" ? 0 : header.size;
    const state = { left: size };
    async function* body(): AsyncGenerator<Uint8Array> {
      while (state.left > 0) {
        const part = await r.some(state.left);
        state.left -= part.length;
        yield part;
      }
    }
    yield { header, body: body() };
    // Skip what the caller left unread (also when it stopped iterating the body early).
    while (state.left > 0) state.left -= (await r.some(state.left)).length;
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad && (await r.exact(pad)) === null) throw new TarError("the archive is truncated");
  }
}
