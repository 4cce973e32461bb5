/**
 * A strict RFC 4180 reader for tests (an independent check of src/lib/csv.ts): records end with
 * CRLF, fields may be quoted, quotes inside quoted fields are doubled. Throws on anything else.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = "";
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quoted field");
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
        if (text[i] === '"') throw new Error(`bare quote at ${i}`);
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ",") {
      i++;
    } else if (text.startsWith("\r\n", i)) {
      records.push(record);
      record = [];
      i += 2;
    } else {
      throw new Error(`expected , or CRLF at ${i}`);
    }
  }
  if (record.length > 0) throw new Error("last record without CRLF");
  return records;
}

/** Records as objects keyed by the header row; every record must have the header's width. */
export function csvObjects(text: string): Record<string, string>[] {
  const [head, ...rows] = parseCsv(text);
  return rows.map((r) => {
    if (r.length !== head!.length) throw new Error(`record of ${r.length} fields, header of ${head!.length}`);
    return Object.fromEntries(r.map((v, i) => [head![i]!, v]));
  });
}

/** A streamed CSV export read to its end, as the text a client receives. */
export async function csvText(body: ReadableStream<Uint8Array> | Promise<ReadableStream<Uint8Array>>) {
  return await new Response(await body).text();
}
