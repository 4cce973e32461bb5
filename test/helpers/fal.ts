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
