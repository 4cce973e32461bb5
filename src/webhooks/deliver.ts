import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { formatIp } from "../lib/addresses.ts";
import { DomainError } from "../lib/errors.ts";
import { pickAddress, pinnedRequestOptions } from "./pinned.ts";
import { type Resolver, resolveAllowedAddresses, systemResolver, type WebhookPolicy } from "./url-policy.ts";

export const DEFAULT_TIMEOUT_MS = 15_000;
/** The receiver's answer body is not used; reading a little lets it finish writing cleanly. */
const MAX_RESPONSE_BYTES = 4096;
const USER_AGENT = "gengate-webhooks/1";

export interface PostOptions {
  policy: WebhookPolicy;
  /** Whole attempt: DNS, connect, TLS, send and the answer's headers. */
  timeoutMs?: number;
  resolve?: Resolver;
  /** Extra trusted CA certificates for https (private PKI, tests). The system store is used otherwise. */
  ca?: string | Buffer;
}

export interface PostResult {
  /** HTTP status of the answer (a 3xx is returned as is: redirects are never followed). */
  status: number;
  /** The checked address the connection was pinned to. */
  address: string;
}

export type DeliveryErrorKind = "refused" | "timeout" | "network";

/** Why no HTTP answer was obtained: the address was refused, the time ran out, or the network failed. */
export class DeliveryError extends Error {
  override name = "DeliveryError";
  constructor(
    message: string,
    readonly kind: DeliveryErrorKind,
  ) {
    super(message);
  }
}

/**
 * POSTs `body` to `url`, connecting only to an address checked against the policy just now.
 *
 * How and why the connection is pinned: pinned.ts.
 */
export async function postPinned(
  url: URL,
  body: string,
  headers: Record<string, string>,
  options: PostOptions,
): Promise<PostResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const isHttps = url.protocol === "https:";
  if (!isHttps && url.protocol !== "http:") {
    throw new DeliveryError(`refused: ${url.protocol} is not http or https`, "refused");
  }

  return new Promise<PostResult>((resolve, reject) => {
    let req: ClientRequest | null = null;
    let res: IncomingMessage | null = null;
    let settled = false;
    const settle = (outcome: { result: PostResult } | { error: DeliveryError }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Nothing more is wanted from this connection, whatever happened.
      res?.destroy();
      req?.destroy();
      if ("result" in outcome) resolve(outcome.result);
      else reject(outcome.error);
    };
    let answered: PostResult | null = null;
    const timer = setTimeout(
      () =>
        // A status line that arrived is the answer, even if its body then stalls.
        settle(
          answered
            ? { result: answered }
            : { error: new DeliveryError(`no answer within ${timeoutMs} ms (timeout)`, "timeout") },
        ),
      timeoutMs,
    );

    resolveAllowedAddresses(url, options.policy, options.resolve ?? systemResolver).then(
      (ips) => {
        if (settled) return;
        const ip = pickAddress(ips);
        const address = formatIp(ip);
        const requestOptions = pinnedRequestOptions(
          url,
          ip,
          "POST",
          {
            ...headers,
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(body)),
            "user-agent": USER_AGENT,
          },
          options.ca,
        );

        const onResponse = (answer: IncomingMessage) => {
          res = answer;
          const result = { status: answer.statusCode ?? 0, address };
          answered = result;
          let read = 0;
          answer.on("data", (chunk: Buffer) => {
            read += chunk.length;
            if (read >= MAX_RESPONSE_BYTES) settle({ result });
          });
          answer.on("end", () => settle({ result }));
          answer.on("close", () => settle({ result }));
          // The status line already arrived: a broken body does not change the answer.
          answer.on("error", () => settle({ result }));
        };
        try {
          req = (isHttps ? httpsRequest : httpRequest)(requestOptions, onResponse);
        } catch (err) {
          settle({ error: new DeliveryError(`request failed: ${(err as Error).message}`, "network") });
          return;
        }
        req.on("error", (err: NodeJS.ErrnoException) => {
          // The address is masked: for an allow-listed private receiver it is internal detail,
          // and this message ends up on the client-visible request record.
          const what = (
            err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message
          ).replaceAll(address, "<address>");
          settle({ error: new DeliveryError(`connection to ${url.host} failed: ${what}`, "network") });
        });
        req.end(body);
      },
      (err: unknown) => {
        const message = err instanceof DomainError ? err.message : String(err);
        settle({ error: new DeliveryError(`refused: ${message}`, "refused") });
      },
    );
  });
}
