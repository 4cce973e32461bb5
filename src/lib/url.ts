/** An address without its trailing slashes, so paths can be appended with "/": "http://h:1//" -> "http://h:1". */
export function stripTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, "");
}
