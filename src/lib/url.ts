/** An address without its trailing slashes, so paths can be appended with "/": "http://h:1//" -> "http://h:1". */
export function stripTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, "");
}

/** {base_url}: the API's root under the public address, "https://gen.example.com" -> "https://gen.example.com/v1". */
export function baseUrl(o: { publicUrl: string }): string {
  return `${o.publicUrl}/v1`;
}
