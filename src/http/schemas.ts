import { t } from "elysia";

/** The contract's error body, declared once and referenced by every route's documented errors. */
export const ErrorSchema = t.Object(
  {
    error: t.Object({
      code: t.String({ description: "Machine-readable code from the spec's error table." }),
      message: t.String({ description: "One human sentence." }),
      type: t.String({ description: "Error class, e.g. invalid_request_error." }),
      param: t.Optional(t.String({ description: "The offending field, when one is to blame." })),
      details: t.Optional(t.Array(t.Object({ path: t.String(), message: t.String() }))),
      request_id: t.Optional(t.String({ description: "Request or job id for support." })),
    }),
  },
  { title: "Error" },
);

/** `{ 401: ErrorSchema, 404: ErrorSchema, ... }` for a route's `response` option. */
export function errors<S extends number>(...statuses: S[]): Record<S, typeof ErrorSchema> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorSchema])) as Record<S, typeof ErrorSchema>;
}

/** Money in JSON: a decimal string of integer micro-units. */
export const MicroString = (description: string) => t.String({ pattern: "^-?[0-9]+$", description });

/** A JSON answer as a Response (it skips Elysia's runtime response check; the schema still documents it). */
export const jsonResponse = (body: string, status = 200, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { "content-type": "application/json", ...headers } });
