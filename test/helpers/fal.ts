import { createFal } from "@ai-sdk/fal";
import { createFalClient } from "@fal-ai/client";

/**
 * The official @fal-ai/client pointed at a gengate server: it builds fal's URLs itself
 * (queue.fal.run, fal.run, rest.fal.ai for storage), so its requestMiddleware moves them to the
 * server, as docs/clients.md tells users to. Each request the client sends is pushed to `sent`
 * as "METHOD path".
 */
export function falClientFor(
  url: string,
  key: string,
  sent: string[] = [],
): ReturnType<typeof createFalClient> {
  return createFalClient({
    credentials: key,
    requestMiddleware: async (req) => ({
      ...req,
      url: req.url
        .replace("https://queue.fal.run/", `${url}/v1/queue/`)
        .replace("https://rest.fal.ai/", `${url}/v1/`)
        .replace("https://fal.run/", `${url}/v1/run/`),
    }),
    fetch: ((input: string | URL | Request, init?: RequestInit) => {
      const u = new URL(input instanceof Request ? input.url : String(input));
      sent.push(`${init?.method ?? "GET"} ${u.pathname}`);
      return fetch(input, init);
    }) as typeof fetch,
  });
}

/**
 * The AI SDK's fal provider pointed at a gengate server whose public_url is `publicUrl`, as
 * docs/clients.md sets it up: images go to `baseURL`, speech and video to fal.run and
 * queue.fal.run (they ignore baseURL), which `fetch` moves to gengate, adding the key (the SDK
 * withholds it from a response_url off queue.fal.run's origin). The SDK downloads outputs only
 * from public addresses or baseURL's origin, so publicUrl is a host name; `fetch` stands in for
 * DNS and sends it to the server's loopback `url`.
 */
export function aiSdkFalFor(url: string, publicUrl: string, key: string) {
  const falFetch = ((input: string | URL | Request, init?: RequestInit) => {
    const target = String(input instanceof Request ? input.url : input)
      .replace("https://queue.fal.run/fal-ai/", `${publicUrl}/v1/queue/`)
      .replace("https://fal.run/", `${publicUrl}/v1/run/`);
    const headers = new Headers(init?.headers);
    if (!headers.has("authorization")) headers.set("authorization", `Key ${key}`);
    return fetch(target.replace(`${publicUrl}/`, `${url}/`), { ...init, headers });
  }) as typeof fetch;
  return { fal: createFal({ apiKey: key, baseURL: `${publicUrl}/v1/run`, fetch: falFetch }), falFetch };
}
