import { describe, expect, test } from "bun:test";
import { stripTrailingSlashes } from "../../src/lib/url.ts";

describe("stripTrailingSlashes", () => {
  test("removes every trailing slash and nothing else", () => {
    expect(stripTrailingSlashes("http://h:1/")).toBe("http://h:1");
    expect(stripTrailingSlashes("http://h:1/base///")).toBe("http://h:1/base");
    expect(stripTrailingSlashes("http://h:1/a/b")).toBe("http://h:1/a/b");
    expect(stripTrailingSlashes("")).toBe("");
  });
});
