import type { StoredOutput } from "../../src/files/output-writer.ts";
import type { makeTestApp } from "./context.ts";

type TestApp = Awaited<ReturnType<typeof makeTestApp>>;

/**
 * A completed job of the test app's default key with one output, made through the real ledger and
 * JobStore: these bytes (written through ctx.outputs, so into the app's blob store), or an output
 * already stored under `outputKey(id, 0)` of the given id. Returns the job id and a maker of
 * signed download links.
 */
export async function completedJobWithOutput(
  t: TestApp,
  output: Uint8Array | { id: string; stored: StoredOutput },
  contentType = "image/png",
) {
  await t.ctx.ledger.topUp(t.account.id, 1_000_000n, null);
  const id = output instanceof Uint8Array ? Bun.randomUUIDv7() : output.id;
  const hold = await t.ctx.ledger.reserve({
    accountId: t.account.id,
    keyId: t.keyId,
    modelId: "sandbox/image",
    requestId: id,
    source: "API",
    quotedUsdMicro: 10n,
  });
  const job = await t.ctx.jobs.insert({
    id,
    accountId: t.account.id,
    keyId: t.keyId,
    modelId: "sandbox/image",
    kind: "image",
    source: "API",
    provider: "sandbox",
    input: "{}",
    quote: '{"amount_usd_micro":"10"}',
    holdId: hold.id,
    webhookUrl: null,
    deadlineAt: Date.now() + 60_000,
    createdAt: Date.now(),
  });
  t.ctx.jobs.markQueued(job);
  await t.ctx.jobs.claimNext("sandbox", [], "w", 60_000, Date.now());
  const stored =
    output instanceof Uint8Array ? await t.ctx.outputs.write(id, 0, output, contentType) : output.stored;
  await t.ctx.jobs.complete(
    id,
    { images: [{ url: { $output: 0 } }] },
    [stored],
    10n,
    null,
    3600_000,
    Date.now(),
  );
  const link = (exp = Math.floor(Date.now() / 1000) + 3600, index = 0, rid = id) =>
    `/v1/requests/${rid}/output/${index}?exp=${exp}&sig=${t.ctx.signer.sign(rid, index, exp)}`;
  return { id, link };
}
