import { describe, expect, test } from "bun:test";
import { createAppContext, liveFromConfig } from "../../src/app/app-context.ts";
import { CatalogError } from "../../src/catalog/catalog.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { testContextOptions } from "../helpers/context.ts";
import { sqlOf } from "../helpers/sql.ts";
import { SDXL, SDXL_SCHEMA } from "../providers/comfyui/helpers.ts";

const options = (config: Record<string, unknown> = {}) => testContextOptions(config as ConfigFile);

const comfy = (schema: Record<string, unknown>) => ({
  providers: { comfy: { type: "comfyui", base_url: "http://127.0.0.1:9", workflows: { sdxl: SDXL } } },
  models: [
    {
      id: "c/img",
      kind: "image",
      provider: "comfy",
      upstream_model: "sdxl",
      price_usd_micro: 10,
      max: 1,
      input_schema: schema,
    },
  ],
});

describe("createAppContext", () => {
  test("an empty database gets the default account and its key; a used one gets none", async () => {
    const db = openDatabase(":memory:");
    migrate(db);
    const first = await createAppContext({ ...options(), sql: sqlOf(db), sqlite: db });
    expect(first.defaultKey?.account.name).toBe("default");
    expect((await first.ctx.accounts.authenticate(first.defaultKey!.key))?.accountId).toBe(
      first.defaultKey!.account.id,
    );
    const again = await createAppContext({ ...options(), sql: sqlOf(db), sqlite: db });
    expect(again.defaultKey).toBeNull();
    expect(await again.ctx.accounts.countAccounts()).toBe(1);
  });

  test("without a database it opens a fresh in-memory one", async () => {
    const a = await createAppContext(options());
    const b = await createAppContext(options());
    expect(a.ctx.sqlite).not.toBe(b.ctx.sqlite);
    expect(a.defaultKey).not.toBeNull();
    expect(b.defaultKey).not.toBeNull();
  });

  test("shutdown aborts the context's signal; the catalog and settings are the ones given", async () => {
    const o = options({ catalog: { sandbox: false }, limits: { writes_per_minute: 7 } });
    const { ctx, shutdown } = await createAppContext(o);
    expect(ctx.catalog).toBe(o.catalog);
    expect(ctx.live.limits.writesPerMinute).toBe(7);
    expect(ctx.catalog.models).toHaveLength(0);
    expect(ctx.shutdownSignal.aborted).toBe(false);
    shutdown.abort();
    expect(ctx.shutdownSignal.aborted).toBe(true);
  });
});

describe("liveFromConfig", () => {
  test("checks ComfyUI models against their workflows, as the server's start does", () => {
    expect(liveFromConfig(comfy(SDXL_SCHEMA) as never).catalog.get("c/img")?.provider).toBe("comfy");
    const { steps: _steps, ...props } = SDXL_SCHEMA.properties;
    expect(() => liveFromConfig(comfy({ ...SDXL_SCHEMA, properties: props }) as never)).toThrow(CatalogError);
  });
});
