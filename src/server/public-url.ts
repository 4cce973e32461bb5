import type { ServerSettings } from "../config/schema.ts";

/** {public_url}: the configured one, else the address the server listens on (operator commands use it too). */
export function publicUrlOf(
  settings: Pick<ServerSettings, "publicUrl" | "host" | "tls">,
  port: number,
): string {
  return settings.publicUrl || `${settings.tls ? "https" : "http"}://${hostForUrl(settings.host)}:${port}`;
}

/** A listening host as a URL host: a wildcard becomes loopback, an IPv6 address gets brackets. */
export function hostForUrl(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}
