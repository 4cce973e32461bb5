// The self-contained Scalar build, embedded in the binary. Imported by relative path because the
// package's export map does not expose dist/browser; the .esm build would fetch chunks, this one does not.
// @ts-expect-error: a .js asset imported as a file path (type "file"); TypeScript has no type for that.
import scalarBundlePath from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with {
  type: "file",
};

export const SCALAR_BUNDLE_PATH: string = scalarBundlePath;

/**
 * The API reference page. Everything it loads comes from this server: no CDN, no fonts from the
 * internet, no telemetry or proxy, so it works air-gapped.
 */
export function scalarPage(specUrl: string, bundleUrl: string): string {
  const config = {
    url: specUrl,
    cdn: bundleUrl,
    withDefaultFonts: false,
    telemetry: false,
    proxyUrl: "",
    hideClientButton: false,
    showDeveloperTools: "never",
    metaData: { title: "gengate API reference" },
  };
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
