import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import { newWebhookSecret } from "./signing.ts";

interface SecretRow {
  secret: string;
  previous_secret: string | null;
  previous_until: bigint | null;
}

export interface WebhookSecretStoreOptions {
  /** Clock in epoch ms. */
  now?: () => number;
  /**
   * After a rotation the old secret keeps signing (a second signature in the same header) for
   * this long, so receivers can switch without refusing webhooks in between. Default 24 h.
   */
  rotationOverlapMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * One whsec_ secret per account (table webhook_secrets), created on first use so accounts made
 * by any path (CLI, API, tests) get one without a hook in account creation.
 */
export class WebhookSecretStore extends SqlStore {
  private readonly now: () => number;
  private readonly overlapMs: number;

  protected override s = {
    get: this.q<SecretRow, [string]>(
      "SELECT secret, previous_secret, previous_until FROM webhook_secrets WHERE account_id = ?",
    ),
    // DO NOTHING: two first uses racing keep whichever committed first; both then read that one.
    create: this.q<null, [string, string, number]>(
      "INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (account_id) DO NOTHING",
    ),
    rotate: this.q<null, [string, number, number, string]>(
      `UPDATE webhook_secrets
         SET previous_secret = secret, previous_until = ?2, secret = ?1, rotated_at = ?3
         WHERE account_id = ?4`,
    ),
  };

  constructor(sql: Sql, options: WebhookSecretStoreOptions = {}) {
    super(sql);
    this.now = options.now ?? Date.now;
    this.overlapMs = options.rotationOverlapMs ?? DAY_MS;
  }

  /** The account's current secret, created on first use. */
  async get(accountId: string): Promise<string> {
    const row = await this.s.get.get(accountId);
    if (row) return row.secret;
    await this.s.create.run(accountId, newWebhookSecret(), this.now());
    return (await this.s.get.get(accountId))!.secret;
  }

  /** Replaces the secret; the previous one keeps signing during the overlap. Returns the new one. */
  async rotate(accountId: string): Promise<string> {
    return await this.atomic(async (self) => {
      const fresh = newWebhookSecret();
      const now = self.now();
      if (!(await self.s.get.get(accountId))) {
        // Nobody has seen a secret yet, so there is nothing to overlap with.
        await self.s.create.run(accountId, fresh, now);
      } else {
        await self.s.rotate.run(fresh, now + self.overlapMs, now, accountId);
      }
      return fresh;
    });
  }

  /** Secrets to sign with right now: the current one, then the previous one during the overlap. */
  async signingSecrets(accountId: string): Promise<string[]> {
    const current = await this.get(accountId);
    const row = (await this.s.get.get(accountId))!;
    const out = [current];
    if (row.previous_secret && row.previous_until !== null && Number(row.previous_until) > this.now()) {
      out.push(row.previous_secret);
    }
    return out;
  }
}
