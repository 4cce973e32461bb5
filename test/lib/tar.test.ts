import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readTar, TarError, TarWriter } from "../../src/lib/tar.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir("gengate-tar-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function bytes(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

async function build(entries: [string, Uint8Array][]): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const w = new TarWriter((c) => {
    chunks.push(c.slice());
  });
  for (const [name, body] of entries) {
    // Content in uneven chunks, as a file read would give it.
    const parts = [body.subarray(0, 100), body.subarray(100)];
    await w.file({ name, size: body.length, mode: 0o600, mtime: 1_700_000_000 }, parts);
  }
  await w.finish();
  return Buffer.concat(chunks);
}

/** Feeds a buffer in chunks of `size` bytes, so headers and bodies straddle chunk edges. */
async function* chunked(buf: Uint8Array, size: number) {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function readAll(source: AsyncIterable<Uint8Array>) {
  const out: { name: string; type: string; mode: number; body: Buffer }[] = [];
  for await (const e of readTar(source)) {
    const parts: Uint8Array[] = [];
    for await (const c of e.body) parts.push(c);
    out.push({ name: e.header.name, type: e.header.type, mode: e.header.mode, body: Buffer.concat(parts) });
  }
  return out;
}

const longName = `files/${"d".repeat(90)}/${"e".repeat(60)}/leaf.bin`;
const entries: [string, Uint8Array][] = [
  ["empty", new Uint8Array(0)],
  ["a/511", bytes(511, 1)],
  ["a/512", bytes(512, 2)],
  ["a/513", bytes(513, 3)],
  [longName, bytes(70_000, 4)],
];

describe("ustar writer and reader", () => {
  test.each([1, 7, 512, 4096, 1 << 20])("round trip with the input in %p-byte chunks", async (size) => {
    const archive = await build(entries);
    expect(archive.length % 512).toBe(0);
    const got = await readAll(chunked(archive, size));
    expect(got.map((e) => e.name)).toEqual(entries.map(([n]) => n));
    for (const [i, [, body]] of entries.entries()) {
      expect(got[i]!.body.equals(Buffer.from(body))).toBe(true);
      expect(got[i]!.mode).toBe(0o600);
      expect(got[i]!.type).toBe("file");
    }
  });

  test("a body left unread (or abandoned midway) is skipped", async () => {
    const archive = await build(entries);
    const names: string[] = [];
    for await (const e of readTar(chunked(archive, 1000))) {
      names.push(e.header.name);
      if (e.header.name === longName) {
        for await (const _ of e.body) break; // one chunk, then stop
      }
    }
    expect(names).toEqual(entries.map(([n]) => n));
  });

  test("stock tar extracts what the writer wrote, byte for byte", async () => {
    const path = join(dir, "ours.tar");
    writeFileSync(path, await build(entries));
    const out = join(dir, "ours");
    mkdirSync(out);
    const r = Bun.spawnSync(["tar", "-xf", path, "-C", out]);
    expect(r.exitCode).toBe(0);
    for (const [name, body] of entries)
      expect(readFileSync(join(out, name)).equals(Buffer.from(body))).toBe(true);
  });

  test("the reader reads what stock tar writes in ustar format", async () => {
    const src = join(dir, "src");
    mkdirSync(join(src, "sub"), { recursive: true });
    writeFileSync(join(src, "sub", "x.bin"), bytes(3000, 9));
    const path = join(dir, "theirs.tar");
    expect(Bun.spawnSync(["tar", "--format=ustar", "-cf", path, "-C", src, "sub"]).exitCode).toBe(0);
    const got = await readAll(chunked(readFileSync(path), 777));
    expect(got.map((e) => [e.name, e.type])).toEqual([
      ["sub/", "directory"],
      ["sub/x.bin", "file"],
    ]);
    expect(got[1]!.body.equals(Buffer.from(bytes(3000, 9)))).toBe(true);
  });

  test("damage is detected: a header byte, a truncation, a missing end marker", async () => {
    const archive = Buffer.from(await build(entries));
    const flipped = Buffer.from(archive);
    flipped[512 + 3]! ^= 1; // inside the second header (the first entry has an empty body)
    await expect(readAll(chunked(flipped, 4096))).rejects.toThrow(/checksum/);
    await expect(readAll(chunked(archive.subarray(0, 2000), 4096))).rejects.toThrow(/truncated/);
    await expect(readAll(chunked(archive.subarray(0, archive.length - 1024), 4096))).rejects.toThrow(
      /no end-of-archive marker/,
    );
  });

  test("the writer refuses sizes that do not match, names that do not fit, other types", async () => {
    const w = new TarWriter(() => {});
    await expect(w.file({ name: "x", size: 10, mode: 0o600, mtime: 0 }, [new Uint8Array(9)])).rejects.toThrow(
      TarError,
    );
    await expect(w.file({ name: "x", size: 1, mode: 0o600, mtime: 0 }, [new Uint8Array(2)])).rejects.toThrow(
      /more bytes/,
    );
    await expect(w.file({ name: "n".repeat(101), size: 0, mode: 0o600, mtime: 0 }, [])).rejects.toThrow(
      /too long/,
    );
  });
});
