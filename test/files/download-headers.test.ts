import { describe, expect, test } from "bun:test";
import {
  contentDisposition,
  DOWNLOAD_CSP,
  downloadHeaders,
  downloadName,
  isInlineMedia,
} from "../../src/files/download-headers.ts";

// The one helper for the headers of served user bytes (src/files/download-headers.ts). The routes
// that use it are checked door by door in download-headers-security.test.ts.

describe("download headers", () => {
  test("image, audio and video are inline; SVG, HTML and everything else are attachments", () => {
    for (const type of [
      "image/png",
      "image/jpeg",
      "audio/wav",
      "audio/mpeg",
      "video/webm",
      "video/mp4; codecs=avc1",
    ])
      expect([type, isInlineMedia(type)]).toEqual([type, true]);
    for (const type of [
      "image/svg+xml",
      "IMAGE/SVG+XML",
      "text/html",
      "text/html; charset=utf-8",
      "application/xhtml+xml",
      "application/octet-stream",
      "text/plain",
      "application/json",
      "image/",
      "",
    ])
      expect([type, isInlineMedia(type)]).toEqual([type, false]);
  });

  test("the name takes the type's extension, .bin for an unknown type", () => {
    expect(downloadName("file_abc", "image/png")).toBe("file_abc.png");
    expect(downloadName("r-0", "audio/wav")).toBe("r-0.wav");
    expect(downloadName("r-0", "Video/WebM; x=y")).toBe("r-0.webm");
    expect(downloadName("r-0", "text/html")).toBe("r-0.html");
    expect(downloadName("r-0", "application/x-unknown")).toBe("r-0.bin");
  });

  test("a PNG output: inline, nosniff, the sandbox CSP", () => {
    expect(downloadHeaders("image/png", "0190-1")).toEqual({
      "content-type": "image/png",
      "x-content-type-options": "nosniff",
      "content-disposition": `inline; filename="0190-1.png"; filename*=UTF-8''0190-1.png`,
      "content-security-policy": DOWNLOAD_CSP,
    });
    expect(DOWNLOAD_CSP).toContain("default-src 'none'");
    expect(DOWNLOAD_CSP).toContain("sandbox");
  });

  test("Content-Disposition: RFC 6266 filename in safe ASCII, filename* in UTF-8 (RFC 8187)", () => {
    expect(contentDisposition("attachment", "report.html")).toBe(
      `attachment; filename="report.html"; filename*=UTF-8''report.html`,
    );
    // Quotes, backslashes, separators, controls and non-ASCII never reach the quoted filename.
    const hostile = contentDisposition("attachment", 'a"b\\c/d\r\nSet-Cookie: x=1;é(1)*.html');
    expect(hostile).toBe(
      `attachment; filename="a_b_c_d__Set-Cookie__x_1___1__.html"; filename*=UTF-8''a%22b%5Cc%2Fd%0D%0ASet-Cookie%3A%20x%3D1%3B%C3%A9%281%29%2A.html`,
    );
    expect(hostile).not.toMatch(/[\r\n]/);
    // A leading dot would make a hidden file; an empty name gets one.
    expect(contentDisposition("inline", ".profile")).toStartWith(`inline; filename="_profile"`);
    expect(contentDisposition("inline", "")).toStartWith(`inline; filename="download"`);
  });
});
