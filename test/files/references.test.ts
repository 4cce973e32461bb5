import { describe, expect, test } from "bun:test";
import { fileContentUrl, ownFileUrlsToIds } from "../../src/files/references.ts";
import { falQueueUrls } from "../../src/queue/views.ts";

const BASE = "https://gen.example.com";
const ID = `file_${"a1B2".repeat(6)}`;

describe("links to the server's own uploads count as their file id", () => {
  test("plain and signed links, at any depth", () => {
    const url = fileContentUrl(BASE, ID);
    expect(url).toBe(`${BASE}/v1/files/${ID}/content`);
    const input = {
      image_url: url,
      refs: [{ url: `${url}?exp=1&sig=abc` }, "text"],
      n: 2,
      none: null,
    };
    expect(ownFileUrlsToIds(input, BASE)).toEqual({
      image_url: ID,
      refs: [{ url: ID }, "text"],
      n: 2,
      none: null,
    });
  });

  test("anything else is left alone", () => {
    for (const other of [
      `https://elsewhere.example/v1/files/${ID}/content`, // another host
      `${BASE}/v1/files/${ID}`, // metadata, not the bytes
      `${BASE}/v1/files/${ID}/content/extra`,
      `${BASE}/v1/files/file_short/content`,
      `${BASE}/v1/requests/${ID}/content`,
      `http://gen.example.com/v1/files/${ID}/content`, // another scheme
    ]) {
      expect(ownFileUrlsToIds({ image_url: other }, BASE)).toEqual({ image_url: other });
    }
  });
});

describe("fal alias URLs", () => {
  test("name the model's owner and alias only, like fal's queue", () => {
    const id = "0190b3a4-0000-7000-8000-000000000000";
    const at = `${BASE}/v1/queue/acme/flux/requests/${id}`;
    expect(falQueueUrls(`${BASE}/v1`, "acme/flux/dev", id)).toEqual({
      status_url: `${at}/status`,
      response_url: at,
      cancel_url: `${at}/cancel`,
    });
    expect(falQueueUrls(`${BASE}/v1`, "sandbox/image", id).response_url).toBe(
      `${BASE}/v1/queue/sandbox/image/requests/${id}`,
    );
  });
});
