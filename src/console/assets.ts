/**
 * The console's two static assets (app.js with htmx and uPlot, console.css), built by the macro in
 * asset-build.ts and held in memory, served under content-hashed names
 * `/console/assets/<name>.<hash>.<ext>` with a one-year immutable cache lifetime, gzipped when the
 * client accepts it. See docs/console.md, "Assets".
 */
import { buildConsoleAssets } from "./asset-build.ts" with { type: "macro" };
import { withSecurityHeaders } from "./security.ts";

const BUILT = buildConsoleAssets();

const TYPES = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" } as const;

export interface ConsoleAsset {
  /** `/console/assets/app.1a2b3c4d5e6f.js` */
  path: string;
  type: string;
  body: Uint8Array;
  etag: string;
  gzipped: Uint8Array | null;
}

function hashOf(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex").slice(0, 12);
}

let assets: Map<string, ConsoleAsset> | null = null;
let paths: { js: string; css: string } | null = null;

function load(): Map<string, ConsoleAsset> {
  if (assets) return assets;
  const map = new Map<string, ConsoleAsset>();
  const found: Record<string, string> = {};
  for (const a of BUILT) {
    const body = new TextEncoder().encode(a.text);
    const hash = hashOf(body);
    const path = `/console/assets/${a.name}.${hash}.${a.ext}`;
    map.set(path, { path, type: TYPES[a.ext], body, etag: `"${hash}"`, gzipped: null });
    found[a.ext] = path;
  }
  assets = map;
  paths = { js: found.js!, css: found.css! };
  return map;
}

/** Every asset, by path (tests and the size report read it). */
export function consoleAssets(): ReadonlyMap<string, ConsoleAsset> {
  return load();
}

/** The hashed paths the layout links. */
export function consoleAssetPaths(): { js: string; css: string } {
  load();
  return paths!;
}

/** The gzip of an asset, made on first use and kept (the bundles never change while running). */
function gzipOf(asset: ConsoleAsset): Uint8Array {
  asset.gzipped ??= Bun.gzipSync(asset.body as Uint8Array<ArrayBuffer>, { level: 9 });
  return asset.gzipped;
}

function acceptsGzip(request: Request): boolean {
  const accept = request.headers.get("accept-encoding") ?? "";
  return /(^|[,\s])gzip(?!;\s*q=0(\.0*)?(\s|,|$))/i.test(accept);
}

/** GET /console/assets/<name>.<hash>.<ext>; an unknown name (or an old hash) is a 404 page elsewhere. */
export function serveAsset(request: Request, path: string): Response | null {
  const asset = load().get(path);
  if (!asset) return null;
  const headers: Record<string, string> = {
    "content-type": asset.type,
    "cache-control": "public, max-age=31536000, immutable",
    etag: asset.etag,
    vary: "accept-encoding",
  };
  if (request.headers.get("if-none-match") === asset.etag) {
    return withSecurityHeaders(new Response(null, { status: 304, headers }));
  }
  if (acceptsGzip(request)) {
    headers["content-encoding"] = "gzip";
    return withSecurityHeaders(new Response(gzipOf(asset), { headers }));
  }
  return withSecurityHeaders(new Response(asset.body, { headers }));
}
