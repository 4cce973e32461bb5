import { expect } from "bun:test";
import { resolveModel } from "../../src/catalog/catalog.ts";
import type { Model } from "../../src/catalog/model.ts";
import { SANDBOX_MODELS } from "../../src/catalog/sandbox-models.ts";
import { DomainError, type ErrorCode } from "../../src/lib/errors.ts";

/**
 * Models for pricing tests, always built through resolveModel so they are entries the real
 * catalog would accept (a hand-built object could hold a combination config validation refuses).
 */
export function makeModel(config: Record<string, unknown>): Model {
  return resolveModel({ id: "test/model", provider: "sandbox", ...config }, "test");
}

export function sandbox(id: string): Model {
  const i = SANDBOX_MODELS.findIndex((m) => m.id === id);
  if (i < 0) throw new Error(`no sandbox model ${id}`);
  return resolveModel(SANDBOX_MODELS[i], `built-in models[${i}]`);
}

/** Asserts fn throws an DomainError with this code and (when given) this param; returns it for more checks. */
export function expectDomainError(fn: () => unknown, code: ErrorCode, param?: string): DomainError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(DomainError);
  const err = caught as DomainError;
  expect(err.code).toBe(code);
  if (param !== undefined) expect(err.param).toBe(param);
  return err;
}
