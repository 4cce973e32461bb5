// The self-contained Scalar build, embedded in the binary. Imported by relative path because the
// package's export map does not expose dist/browser; the .esm build would fetch chunks, this one does not.
// @ts-expect-error: a .js asset imported as a file path (type "file"); TypeScript has no type for that.
import scalarBundlePath from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with {
  type: "file",
};

export const SCALAR_BUNDLE_PATH: string = scalarBundlePath;

/**
 * The Scalar configuration of the API reference page. Everything the page loads comes from this
 * server: no CDN, no fonts from the internet, no telemetry or proxy, so it works air-gapped.
 * Scalar (1.72) turns on its "Ask AI" agent and its "Generate MCP" button by itself when the page
 * is served from localhost, 127.0.0.1 or a .test/.example host; both call scalar.com, so both are
 * disabled explicitly (`agent.disabled`, `mcp.disabled`: the option names of the installed version,
 * checked by test/docs/scalar-page.test.ts against its bundle).
 */
function scalarConfig(specUrl: string, bundleUrl: string) {
  return {
    url: specUrl,
    cdn: bundleUrl,
    withDefaultFonts: false,
    telemetry: false,
    proxyUrl: "",
    hideClientButton: false,
    showDeveloperTools: "never",
    agent: { disabled: true },
    mcp: { disabled: true },
    metaData: { title: "gengate API reference" },
  };
}

/** The API reference page (see scalarConfig). */
export function scalarPage(specUrl: string, bundleUrl: string): string {
  const config = scalarConfig(specUrl, bundleUrl);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>gengate API reference</title>
  <style>body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}</style>
</head>
<body>
  <script id="api-reference" data-url="${specUrl}" data-configuration='${JSON.stringify(config).replaceAll("'", "&#39;")}'></script>
  <script src="${bundleUrl}"></script>
</body>
</html>`;
}
