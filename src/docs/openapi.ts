import { toOpenAPISchema } from "@elysiajs/openapi/openapi";
import type { AnyElysia } from "elysia";
import { ERROR_CODES } from "../http/errors.ts";

type Json = Record<string, unknown>;

const DESCRIPTION = `Prepaid HTTP API for generation models (video, image, avatar, upscale, speech, text).

Authenticate with \`Authorization: Key <API_KEY>\` (\`Bearer <API_KEY>\` also works, for OpenAI SDKs).
Money is integer micro-units carried as decimal strings (1 USD = 1,000,000 micro-USD).
Every error is \`{"error": {"code", "message", "type", "param"?, "details"?, "request_id"?}}\`.
A guide for people and LLMs is at [/v1/llms.txt](/v1/llms.txt).
Keys, usage, requests, the wallet and the studio: [the web console](/console).`;

/**
 * Builds the OpenAPI 3.1 document from the app's real route table (so it cannot drift from the
 * routes), then fixes what the generator leaves loose: wildcard model-id segments become a
 * documented path parameter, bodies are JSON only, operation ids are valid identifiers, and every
 * error response points at one shared Error schema.
 */
export function buildOpenApi(app: AnyElysia, publicUrl: string, version: string): Json {
  const generated = toOpenAPISchema(app, { paths: [/^\/docs/], staticFile: false }) as {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Json };
  };
  const paths: Record<string, Record<string, Json>> = {};
  for (const [rawPath, ops] of Object.entries(generated.paths)) {
    const path = rawPath.replace(/\/\*(?=\/|$)/g, "/{model_id}");
    const fixed: Record<string, Json> = paths[path] ?? {};
    for (const [method, op] of Object.entries(ops)) fixed[method] = fixOperation(method, path, op);
    paths[path] = fixed;
  }
  integersAsIntegers(paths);
  integersAsIntegers(generated.components.schemas);
  return {
    openapi: "3.1.0",
    info: {
      title: "gengate API",
      version: "1",
      description: DESCRIPTION,
      license: { name: "Proprietary", identifier: "LicenseRef-gengate" },
      "x-gengate-version": version,
    },
    servers: [{ url: publicUrl, description: "This gateway" }],
    tags: [
      { name: "Catalog", description: "Models, prices and limits. No key needed." },
      { name: "Account", description: "The caller's account, wallet and spend." },
      { name: "Keys", description: "API keys of the account (needs a key with the manage right)." },
      { name: "Pricing", description: "Exact prices before running anything." },
      { name: "Queue", description: "Media jobs: submit, wait, read, cancel, download." },
      { name: "Chat", description: "OpenAI-compatible chat completions for text models." },
      { name: "Replicate", description: "Replicate's predictions API, for Replicate's clients." },
      {
        name: "OpenAI videos",
        description: "OpenAI's videos API over video and avatar models: one queue job per video.",
      },
      {
        name: "OpenAI media",
        description: "OpenAI's images and speech calls, answered when their job ends.",
      },
      { name: "Files", description: "Uploads referenced by file_id in model inputs." },
      { name: "Admin", description: "Operator API, with the admin token." },
      { name: "Documentation", description: "This schema, the API reference and the LLM guide." },
      { name: "Operations", description: "Health probes." },
    ],
    paths,
    components: {
      schemas: { ...generated.components.schemas, Error: ERROR_SCHEMA },
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "Authorization",
          description:
            "`Key <API_KEY>` (or `Bearer <API_KEY>`, `Token <API_KEY>`); the `x-api-key: <API_KEY>` header is accepted too.",
        },
        adminToken: { type: "http", scheme: "bearer", description: "Operator admin token (/admin/v1)." },
      },
    },
  };
}

const ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message", "type"],
      properties: {
        code: { type: "string", enum: Object.keys(ERROR_CODES) },
        message: { type: "string" },
        type: { type: "string" },
        param: { type: "string" },
        details: {
          type: "array",
          items: {
            type: "object",
            required: ["path", "message"],
            properties: { path: { type: "string" }, message: { type: "string" } },
          },
        },
        request_id: { type: "string" },
      },
    },
  },
};

const REASONS: Record<string, string> = {
  "400": "Invalid request",
  "401": "Missing or invalid key",
  "402": "Balance or key limit",
  "403": "Forbidden",
  "404": "Not found",
  "409": "Conflict",
  "410": "Gone",
  "413": "Payload too large",
  "415": "Unsupported media type",
  "429": "Rate limited",
  "502": "Upstream failure",
  "503": "Unavailable",
  "507": "Insufficient storage",
};

function fixOperation(method: string, path: string, op: Json): Json {
  const out: Json = { ...op };
  out.operationId = operationId(method, path);
  if (path.includes("{model_id}")) {
    const params = ((out.parameters as Json[] | undefined) ?? []).filter((p) => p.name !== "*");
    params.unshift({
      name: "model_id",
      in: "path",
      required: true,
      description: "Model id exactly as listed in /v1/models; it contains slashes, which are not encoded.",
      schema: { type: "string" },
    });
    out.parameters = params;
  }
  const body = out.requestBody as { content?: Json } | undefined;
  if (body?.content?.["application/json"]) {
    out.requestBody = { ...body, content: { "application/json": body.content["application/json"] } };
  }
  const responses = (out.responses as Record<string, Json> | undefined) ?? {};
  for (const [status, r] of Object.entries(responses)) {
    if (Number(status) >= 400) {
      responses[status] = {
        description: REASONS[status] ?? "Error",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    } else if (!r.description) {
      r.description = "OK";
    }
  }
  if (Object.keys(responses).length === 0) responses["200"] = { description: "OK" };
  out.responses = responses;
  if (!out.security) out.security = [];
  return out;
}

/**
 * Elysia's t.Integer / t.Numeric reach the document as `anyOf: [{type: "string", format: "integer"},
 * {type: "integer"}]` (the string branch is its coercion of query text), so the reference UI showed
 * 92 integer fields as "string or integer" and its examples read `"max": "string"`. Each such union
 * becomes its number branch, keeping the field's own description and example (in place, recursively).
 */
function integersAsIntegers(node: unknown): void {
  if (!node || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const item of node) integersAsIntegers(item);
    return;
  }
  const o = node as Json;
  const union = o.anyOf;
  if (Array.isArray(union) && union.length === 2) {
    const [text, num] = union as Json[];
    const coercion =
      text?.type === "string" &&
      (text.format === "integer" || text.format === "numeric") &&
      (num?.type === "integer" || num?.type === "number");
    if (coercion) {
      delete o.anyOf;
      for (const [k, v] of Object.entries(num!)) if (!(k in o)) o[k] = v;
    }
  }
  for (const v of Object.values(o)) integersAsIntegers(v);
}

function operationId(method: string, path: string): string {
  const words = path
    .split("/")
    .filter((s) => s && s !== "v1")
    .map((s) =>
      s
        .replace(/[{}]/g, "")
        .replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : "")),
    )
    .map((s) => s.charAt(0).toUpperCase() + s.slice(1));
  return method.toLowerCase() + words.join("");
}
