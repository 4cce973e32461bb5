import type { StoredResponse } from "../../src/idempotency/idempotency.ts";
import { apiOpener, type JobToOpen } from "../../src/jobs/open.ts";
import { priceMediaInput } from "../../src/pricing/media.ts";
import { reserveText } from "../../src/pricing/text.ts";
import type { JobRow } from "../../src/queue/job-row.ts";
import { countRows } from "../helpers/backend.ts";
import { testQueueServices } from "../helpers/services.ts";

/** The services (no HTTP) with a funded key, and builders of openJob requests for a media and a text model. */
export async function openJobSetup(balanceMicro = 10_000_000n) {
  const t = await testQueueServices();
  if (balanceMicro > 0n) await t.ctx.ledger.topUp(t.account.id, balanceMicro, null);
  const principal = (await t.ctx.accounts.authenticate(t.key))!;
  const who = apiOpener(t.ctx, principal);
  const image = t.ctx.catalog.get("sandbox/image")!;
  const chat = t.ctx.catalog.get("sandbox/chat")!;
  const media = (over: Partial<JobToOpen> = {}): JobToOpen => ({
    who,
    model: image,
    input: JSON.stringify({ prompt: "a cat" }),
    quote: priceMediaInput(image, { prompt: "a cat" }),
    webhookUrl: null,
    ...over,
  });
  const text = (over: Partial<JobToOpen> = {}): JobToOpen => ({
    who,
    model: chat,
    input: JSON.stringify({ messages: [{ role: "user", content: "hi" }], max_tokens: 16 }),
    quote: reserveText(chat, 8, 16, { input: "messages", output: "max_tokens" }),
    webhookUrl: null,
    ...over,
  });
  return {
    t,
    principal,
    who,
    media,
    text,
    jobs: () => countRows(t.ctx.sql, "jobs"),
    holds: () => countRows(t.ctx.sql, "holds"),
  };
}

/** The answer a submit stores under its key: the job's id, as the queued view carries it. */
export const idAnswer = (job: JobRow): StoredResponse => ({
  status: 202,
  body: JSON.stringify({ request_id: job.id }),
});
