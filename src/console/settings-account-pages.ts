/**
 * The account settings that are not members (owners only): the webhook signing secret (reveal,
 * rotate after a confirmation) and the low-balance alert (threshold, alert URL; src/alerts/).
 * Thin: parse the form, call the store (WebhookSecretStore, AccountStore, LowBalanceAlerts), then
 * redirect (303) or render the account page with the secret shown once (revealed: the POST's answer;
 * rotated: after the redirect, from the session's flash).
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { parseDecimalToMicro } from "../lib/money.ts";
import { type ActionContext, type ConsoleKit, field, htmlResponse, redirect, requireOwner } from "./kit.ts";
import { accountError, accountPage, rotateForm } from "./settings-account-view.ts";
import { ACCOUNT_PATH, ROTATED_SECRET } from "./settings-shared.ts";

async function revealSecret(kit: ConsoleKit, c: ActionContext) {
  const s = requireOwner(c.session);
  return await accountPage(kit, c, {
    secret: { value: await kit.ctx.webhookSecrets.get(s.accountId), rotated: false },
  });
}

async function rotateSecret(kit: ConsoleKit, c: ActionContext) {
  const s = requireOwner(c.session);
  if (field(c.form, "confirm") !== "yes") {
    return c.layout({ title: "Rotate the webhook secret", active: "settings", body: rotateForm(s) });
  }
  // Post/redirect/get: the new secret waits in the session's flash for the page the redirect
  // leads to, so reloading that page rotates nothing and shows the secret no more.
  const value = await kit.ctx.webhookSecrets.rotate(s.accountId);
  await kit.people.sessions.setFlash(s.sessionId, ROTATED_SECRET, { value });
  return redirect(`${ACCOUNT_PATH}?done=rotated`);
}

async function setAlertThreshold(kit: ConsoleKit, c: ActionContext) {
  const s = requireOwner(c.session);
  const text = field(c.form, "threshold")
    .trim()
    .replace(/[\s,_]/g, "");
  let micro: bigint | null = null;
  if (text !== "") {
    micro = parseDecimalToMicro(text);
    if (micro === null) {
      return accountError(
        kit,
        c,
        new DomainError(
          "validation_error",
          "The alert threshold must be a positive amount with at most 6 decimals, or empty for none.",
          { param: "threshold" },
        ),
      );
    }
  }
  await kit.ctx.accounts.setAlertThreshold(s.accountId, micro);
  return redirect(`${ACCOUNT_PATH}?done=threshold`);
}

async function setAlertUrl(kit: ConsoleKit, c: ActionContext) {
  const s = requireOwner(c.session);
  const value = field(c.form, "alert_url").trim();
  let url: string | null = null;
  if (value !== "") {
    try {
      // The job webhooks' policy: http(s), public addresses only (or the operator's CIDRs).
      url = (await kit.ctx.checkWebhookUrl(value)).href;
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== "bad_webhook_url") throw err;
      const message = err.message.replace(/^webhook_url/, "The alert URL");
      return htmlResponse(
        await accountPage(kit, c, { alertUrl: { value: value.slice(0, 2048), error: message } }),
        400,
      );
    }
  }
  await kit.ctx.alerts.setUrl(s.accountId, url);
  return redirect(`${ACCOUNT_PATH}?done=alert-url`);
}

export function settingsAccountPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      `${ACCOUNT_PATH}/webhook-secret/reveal`,
      kit.action((c) => revealSecret(kit, c)),
    )
    .post(
      `${ACCOUNT_PATH}/webhook-secret/rotate`,
      kit.action((c) => rotateSecret(kit, c)),
    )
    .post(
      `${ACCOUNT_PATH}/alert-threshold`,
      kit.action((c) => setAlertThreshold(kit, c)),
    )
    .post(
      `${ACCOUNT_PATH}/alert-url`,
      kit.action((c) => setAlertUrl(kit, c)),
    );
}
