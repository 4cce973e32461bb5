import { DomainError } from "../lib/errors.ts";
import { requestMeta } from "../lib/request-meta.ts";
import type { BlobBackend } from "./blob-backend.ts";
import { downloadHeaders } from "./download-headers.ts";
import type { JobOutputStore, OutputFileRow } from "./job-output-store.ts";
import { parseRange } from "./range.ts";
import { storedFile } from "./stored-file.ts";

/** SPEC: 200 full downloads per output; Range requests excluded; then 429 download_cap. */
export const DOWNLOAD_CAP = 200;

/** What serving a stored output uses: its bytes and its download counter. */
export interface OutputDownloadDeps {
  blobs: BlobBackend;
  jobOutputs: Pick<JobOutputStore, "countDownload">;
}

/**
 * The bytes of one job output the caller may read (a valid signed link or the owning key: the
 * caller decided), whole (200, counted against DOWNLOAD_CAP) or one Range (206, not counted).
 * Shared by GET /v1/requests/{id}/output/{index} and the OpenAI videos door's /content.
 */
export async function outputDownload(
  deps: OutputDownloadDeps,
  request: Request,
  file: OutputFileRow,
  at: { requestId: string; index: number },
): Promise<Response> {
  const size = Number(file.size);
  // Checked before the download is counted: a failed download must not use up the cap.
  const blob = await storedFile(requestMeta(request)?.id, deps.blobs, file.path, size, {
    request_id: at.requestId,
    index: at.index,
  });
  const range = parseRange(request.headers.get("range"), size);
  if (range === "unsatisfiable") {
    throw new DomainError("range_not_satisfiable", `The range does not fit the file (${size} bytes).`, {
      rangeOf: size,
    });
  }
  const whole = range === null || (range.start === 0 && range.end === size - 1);
  if (whole && !(await deps.jobOutputs.countDownload(at.requestId, at.index, DOWNLOAD_CAP))) {
    throw new DomainError(
      "download_cap",
      `This output was downloaded ${DOWNLOAD_CAP} times; ranged requests still work.`,
      {
        retryAfterSeconds: 86_400,
      },
    );
  }
  const headers: Record<string, string> = {
    ...downloadHeaders(file.content_type, `${at.requestId}-${at.index}`),
    "accept-ranges": "bytes",
    etag: `"${file.sha256}"`,
    "cache-control": "private, max-age=3600",
  };
  if (range === null) {
    return new Response(blob.body(), {
      status: 200,
      headers: { ...headers, "content-length": String(size) },
    });
  }
  return new Response(blob.body(range), {
    status: 206,
    headers: {
      ...headers,
      "content-length": String(range.end - range.start + 1),
      "content-range": `bytes ${range.start}-${range.end}/${size}`,
    },
  });
}
