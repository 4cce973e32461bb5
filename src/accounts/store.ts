import type { CacheInvalidation } from "../db/invalidation.ts";
import { type Sql, SqlConstraintError } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import { type Cidr, parseCidr } from "../lib/addresses.ts";
import {
  DISPLAY_PREFIX_LENGTH,
  digestsEqual,
  generateApiKey,
  hashSecret,
  looksLikeApiKey,
} from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import { newTimeOrderedId } from "../lib/ids.ts";
import { nowSeconds, rfc3339 } from "../lib/time.ts";

export type Currency = "USD" | "RUB";

export interface Account {
  id: string;
  name: string;
  currency: Currency;
  balance_micro: bigint;
  held_micro: bigint;
  created_at: bigint;
  /** Low-balance alert threshold (micro-units of the currency); null: none. */
  alert_threshold_micro: bigint | null;
  /** Where the low-balance alert webhook goes; null: no webhook (src/alerts/). */
  alert_url: string | null;
  /** 1: the next fall below the threshold alerts; 0: it alerted, waiting for a credit above it. */
  alert_armed: bigint;
  /** When an operator disabled the account (its keys 401, its sessions ended); null: enabled. */
  disabled_at: bigint | null;
  /** The operator's reason, kept while disabled (shown to operators only). */
  disabled_reason: string | null;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  hash: Uint8Array;
  can_manage: bigint;
  monthly_limit_micro: bigint | null;
  writes_per_minute: bigint | null;
  max_in_flight: bigint | null;
  created_at: bigint;
  last_used_at: bigint | null;
  revoked_at: bigint | null;
  /** The person who created the key in the console; null: the API, the CLI or the operator. */
  created_by: string | null;
  /** Epoch seconds after which the key is refused (401); null: never. */
  expires_at: bigint | null;
  /** When the key was disabled (401 until enabled again); null: enabled. */
  disabled_at: bigint | null;
  /** JSON array of model ids and `prefix*` patterns; null: every model. */
  allowed_models: string | null;
  /** JSON array of CIDR blocks; null: any client address. */
  allowed_cidrs: string | null;
}

/** What an authenticated request knows about its caller. */
export interface Principal {
  keyId: string;
  keyPrefix: string;
  accountId: string;
  canManage: boolean;
  monthlyLimitMicro: bigint | null;
  writesPerMinute: number | null;
  maxInFlight: number | null;
  /** Epoch seconds after which the key is refused; null: never (checked per request: requirePrincipal). */
  expiresAt: bigint | null;
  disabled: boolean;
  /** The key's account was disabled by an operator (401 before any other check). */
  accountDisabled: boolean;
  /** Model ids and `prefix*` patterns the key may use; null: every model (src/jobs/models.ts). */
  allowedModels: readonly string[] | null;
  /** Client addresses the key may be used from, parsed once when cached; null: anywhere. */
  allowedCidrs: readonly Cidr[] | null;
}

/**
 * How long an authenticated key is remembered at most. Every key change drops the cache at once
 * here and, through cache invalidation (scope "keys"), on every other instance within 1 s; the
 * time limit is only the last resort.
 */
const PRINCIPAL_CACHE_MS = 5_000;

/** The cache scope of everything a key may do (src/db/invalidation.ts). */
export const KEYS_SCOPE = "keys";

/** What limits where and until when a key works (API, admin API, CLI and console set them alike). */
export interface KeyControls {
  /** Epoch seconds; null: never expires. */
  expiresAt?: bigint | null;
  /** Validated: exact ids or prefixes ending in `*`; null: every model. */
  allowedModels?: readonly string[] | null;
  /** Validated CIDR blocks in text; null: anywhere. */
  allowedCidrs?: readonly string[] | null;
}

export interface NewKeyOptions extends KeyControls {
  name?: string;
  canManage?: boolean;
  monthlyLimitMicro?: bigint | null;
  writesPerMinute?: number | null;
  maxInFlight?: number | null;
  /** The console person creating the key (members manage only the keys they created). */
  createdBy?: string | null;
}

export interface KeyChanges extends KeyControls {
  name?: string;
  monthlyLimitMicro?: bigint | null;
  writesPerMinute?: number | null;
  maxInFlight?: number | null;
  /** true: refused (401) from the next request on; false: enabled again. */
  disabled?: boolean;
}

/** A list column's stored text: a JSON array, or null for "no limit". */
function listColumn(list: readonly string[] | null | undefined): string | null | undefined {
  return list === undefined || list === null ? list : JSON.stringify(list);
}

function listOf(column: string | null): string[] | null {
  return column === null ? null : (JSON.parse(column) as string[]);
}

/** Account and key SQL, prepared once per database (the query cache holds only 20 statements). */
export class AccountStore extends SqlStore {
  protected override s = {
    // The account's disabled_at comes with the key: disabling an account is a key change (scope "keys").
    byHash: this.q<ApiKeyRow & { account_disabled_at: bigint | null }, [Uint8Array]>(
      `SELECT k.*, a.disabled_at AS account_disabled_at FROM api_keys k JOIN accounts a ON a.id = k.account_id
         WHERE k.hash = ?`,
    ),
    insertAccount: this.q(
      "INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at) VALUES (?, ?, ?, 0, 0, ?)",
    ),
    insertKey: this.q(
      `INSERT INTO api_keys (id, account_id, name, prefix, hash, can_manage, monthly_limit_micro,
         writes_per_minute, max_in_flight, created_at, created_by, expires_at, allowed_models, allowed_cidrs)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    getAccount: this.q<Account, [string]>("SELECT * FROM accounts WHERE id = ?"),
    getAccountByName: this.q<Account, [string]>("SELECT * FROM accounts WHERE name = ?"),
  };

  /** The Sql this store was built on (a view made by `in(tx)` has its transaction as `sql`). */
  private readonly rootSql: Sql;

  /**
   * `invalidation` (the server's and the CLI's): every key change bumps scope "keys" in its
   * transaction and announces it after the commit, and this store drops its principals when any
   * instance (or the CLI) changed keys. Without it (unit tests) only this process's cache is dropped.
   */
  constructor(
    sql: Sql,
    private readonly invalidation: CacheInvalidation | null = null,
  ) {
    super(sql);
    this.rootSql = sql;
    invalidation?.watch(KEYS_SCOPE, () => this.invalidatePrincipals());
  }

  /**
   * Runs a change to what keys may do (create, revoke, limits, the manage right) in one transaction
   * that also bumps scope "keys"; after the commit the principals cache is dropped here and the
   * change announced to the other instances. Bound to a caller's transaction (a sign-up), the bump
   * commits with it and every instance (this one too) learns it from its poll (250 ms): announcing
   * before that commit could make another instance re-read, and cache, the old row.
   */
  private async keysChange<T>(fn: (self: this) => Promise<T>): Promise<T> {
    const ownsTransaction = this.sql === this.rootSql;
    let bumped: Awaited<ReturnType<CacheInvalidation["bump"]>> | null = null;
    const result = await this.sql.tx(async (tx) => {
      const out = await fn(this.in(tx));
      if (this.invalidation) bumped = await this.invalidation.bump(tx, KEYS_SCOPE);
      return out;
    });
    this.invalidatePrincipals();
    if (ownsTransaction && bumped) await this.invalidation!.announce(bumped);
    return result;
  }

  async countAccounts(): Promise<number> {
    const row = await this.q<{ n: bigint }, []>("SELECT count(*) AS n FROM accounts").get();
    return Number(row!.n);
  }

  async getAccount(id: string): Promise<Account | null> {
    return await this.s.getAccount.get(id);
  }

  async findAccountByName(name: string): Promise<Account | null> {
    return await this.s.getAccountByName.get(name);
  }

  /**
   * Creates an account and its Default key (which has the manage right) in one transaction.
   * Returns the key in clear: the only moment it exists outside the caller's hands.
   */
  async createAccount(
    name: string,
    currency: Currency,
    options: { keyCreatedBy?: string | null } = {},
  ): Promise<{ account: Account; keyId: string; key: string }> {
    return await this.keysChange(async (self) => {
      if (await self.findAccountByName(name)) throw nameTaken(name);
      const id = newTimeOrderedId("acct");
      // A concurrent creation of the same name that committed after the check (PostgreSQL).
      await self.s.insertAccount.run(id, name, currency, nowSeconds()).catch((err: unknown) => {
        throw err instanceof SqlConstraintError && err.kind === "unique" ? nameTaken(name) : err;
      });
      const { keyId, key } = await self.createKeyInTx(id, {
        name: "Default",
        canManage: true,
        createdBy: options.keyCreatedBy ?? null,
      });
      return { account: (await self.getAccount(id))!, keyId, key };
    });
  }

  async createKey(accountId: string, options: NewKeyOptions = {}): Promise<{ keyId: string; key: string }> {
    return await this.keysChange(async (self) => await self.createKeyInTx(accountId, options));
  }

  private async createKeyInTx(
    accountId: string,
    options: NewKeyOptions,
  ): Promise<{ keyId: string; key: string }> {
    if (!(await this.getAccount(accountId))) {
      throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
    }
    const key = generateApiKey();
    const keyId = newTimeOrderedId("key");
    await this.s.insertKey.run(
      keyId,
      accountId,
      options.name ?? "Key",
      key.slice(0, DISPLAY_PREFIX_LENGTH),
      hashSecret(key),
      options.canManage ? 1 : 0,
      options.monthlyLimitMicro ?? null,
      options.writesPerMinute ?? null,
      options.maxInFlight ?? null,
      nowSeconds(),
      options.createdBy ?? null,
      options.expiresAt ?? null,
      listColumn(options.allowedModels) ?? null,
      listColumn(options.allowedCidrs) ?? null,
    );
    return { keyId, key };
  }

  /** Whether the key of this account was created by this person (404 for another account's key). */
  async isKeyCreatedBy(accountId: string, keyId: string, personId: string): Promise<boolean> {
    return (await this.getKey(accountId, keyId)).created_by === personId;
  }

  /**
   * Sets (or clears, with null) the account's low-balance alert threshold. A change that leaves
   * the available balance at or above the new threshold (or clears it) re-arms the alert; below
   * it, the armed state is kept (docs/billing.md "Low-balance alerts").
   */
  async setAlertThreshold(accountId: string, thresholdMicro: bigint | null): Promise<void> {
    if (thresholdMicro !== null && thresholdMicro < 0n)
      throw new DomainError("validation_error", "The alert threshold cannot be negative.", {
        param: "alert_threshold",
      });
    const changed = (
      await this.q(
        `UPDATE accounts SET alert_threshold_micro = ?1,
           alert_armed = CASE WHEN ?1 IS NULL OR balance_micro - held_micro >= ?1 THEN 1 ELSE alert_armed END
         WHERE id = ?2`,
      ).run(thresholdMicro, accountId)
    ).changes;
    if (changed === 0)
      throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
  }

  async getAlertThreshold(accountId: string): Promise<bigint | null> {
    const a = await this.getAccount(accountId);
    if (!a) throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
    return a.alert_threshold_micro;
  }

  async listAccounts(limit: number, after: string | null): Promise<Account[]> {
    return await this.q<Account, [string, number]>(
      "SELECT * FROM accounts WHERE id > ? ORDER BY id LIMIT ?",
    ).all(after ?? "", limit);
  }

  /** Operator search: the account with this exact id, or names containing `text` (case-insensitive). */
  async searchAccounts(text: string, limit: number): Promise<Account[]> {
    const like = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return await this.q<Account, [string, string, number]>(
      "SELECT * FROM accounts WHERE id = ? OR lower(name) LIKE ? ESCAPE '\\' ORDER BY name, id LIMIT ?",
    ).all(text, like, limit);
  }

  /**
   * An operator disables (a reason, 1 to 500 characters, checked by the caller) or enables (null)
   * the account. A key change (scope "keys"): every instance drops its cached keys, so the
   * account's keys are refused from the next request on. Disabling twice keeps the first time and
   * the new reason. Unknown ids are 404.
   */
  async setAccountDisabled(accountId: string, reason: string | null): Promise<Account> {
    return await this.keysChange(async (self) => {
      const result =
        reason === null
          ? await self
              .q("UPDATE accounts SET disabled_at = NULL, disabled_reason = NULL WHERE id = ?")
              .run(accountId)
          : await self
              .q(
                "UPDATE accounts SET disabled_at = coalesce(disabled_at, ?), disabled_reason = ? WHERE id = ?",
              )
              .run(nowSeconds(), reason, accountId);
      const changed = result.changes;
      if (changed === 0)
        throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
      return (await self.getAccount(accountId))!;
    });
  }

  async listKeys(accountId: string): Promise<ApiKeyRow[]> {
    return await this.q<ApiKeyRow, [string]>(
      // Keys created in the same second: insertion order on SQLite; PostgreSQL has no rowid: key ids
      // are time-ordered (ties within one ms may order differently).
      `SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, ${this.sql.dialect === "postgres" ? "id" : "rowid"}`,
    ).all(accountId);
  }

  /** A key of this account (revoked ones included), or 404: another account's key id is unknown here. */
  async getKey(accountId: string, keyId: string): Promise<ApiKeyRow> {
    const row = await this.q<ApiKeyRow, [string, string]>(
      "SELECT * FROM api_keys WHERE id = ? AND account_id = ?",
    ).get(keyId, accountId);
    if (!row) throw new DomainError("not_found", `No key ${keyId}.`, { param: "key_id" });
    return row;
  }

  async updateKey(accountId: string, keyId: string, changes: KeyChanges): Promise<ApiKeyRow> {
    return await this.keysChange(async (self) => {
      const key = await self.getKey(accountId, keyId);
      if (key.revoked_at !== null)
        throw new DomainError("conflict", `Key ${keyId} is revoked.`, { param: "key_id" });
      const sets: string[] = [];
      const values: (string | bigint | number | null)[] = [];
      const set = (column: string, value: string | bigint | number | null | undefined) => {
        if (value === undefined) return;
        sets.push(`${column} = ?`);
        values.push(value);
      };
      set("name", changes.name);
      set("monthly_limit_micro", changes.monthlyLimitMicro);
      set("writes_per_minute", changes.writesPerMinute);
      set("max_in_flight", changes.maxInFlight);
      set("expires_at", changes.expiresAt);
      set("allowed_models", listColumn(changes.allowedModels));
      set("allowed_cidrs", listColumn(changes.allowedCidrs));
      // Disabling twice keeps the first time; enabling clears it.
      if (changes.disabled !== undefined)
        set("disabled_at", changes.disabled ? (key.disabled_at ?? nowSeconds()) : null);
      if (sets.length > 0)
        await self.q(`UPDATE api_keys SET ${sets.join(", ")} WHERE id = ?`).run(...values, keyId);
      return self.getKey(accountId, keyId);
    });
  }

  /**
   * Revokes a key at once (the next request with it is 401). The last live key with the manage
   * right cannot be revoked: the account would lock itself out of key management.
   */
  async revokeKey(accountId: string, keyId: string): Promise<ApiKeyRow> {
    return await this.keysChange(async (self) =>
      self.revokeInTx(await self.getKey(accountId, keyId), { keepLastManageKey: true }),
    );
  }

  /** Any account's key by id (revoked ones included), or null. For the operator, who sees every account. */
  async findKey(keyId: string): Promise<ApiKeyRow | null> {
    return await this.q<ApiKeyRow, [string]>("SELECT * FROM api_keys WHERE id = ?").get(keyId);
  }

  /**
   * The operator's revocation (admin API and CLI): any key of any account, the last manage key
   * included, so a leaked Default key can always be stopped. The operator can give the account a
   * new manage key (`key create --manage`). Unknown ids are 404; revoking twice returns the key as is.
   */
  async revokeKeyAsOperator(keyId: string): Promise<ApiKeyRow> {
    return await this.keysChange(async (self) => {
      const key = await self.findKey(keyId);
      if (!key) throw new DomainError("not_found", `No key ${keyId}.`, { param: "key_id" });
      return self.revokeInTx(key, { keepLastManageKey: false });
    });
  }

  private async revokeInTx(key: ApiKeyRow, options: { keepLastManageKey: boolean }): Promise<ApiKeyRow> {
    if (key.revoked_at !== null) return key;
    if (options.keepLastManageKey && key.can_manage === 1n) {
      const others = (await this.q<{ n: bigint }, [string, string]>(
        "SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND id != ? AND can_manage = 1 AND revoked_at IS NULL",
      ).get(key.account_id, key.id))!;
      if (others.n === 0n) {
        throw new DomainError(
          "conflict",
          "This is the account's last key with the manage right; create another manage key before revoking it.",
          { param: "key_id" },
        );
      }
    }
    await this.q("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run(nowSeconds(), key.id);
    return (await this.findKey(key.id))!;
  }

  /**
   * Resolves a presented key. The lookup is by SHA-256 (an index probe reveals nothing about the
   * key), and the stored digest is compared again in constant time. Revoked keys resolve to null;
   * disabled and expired ones resolve, so requirePrincipal can say which (401 either way).
   */
  async authenticate(presented: string): Promise<Principal | null> {
    if (!looksLikeApiKey(presented)) return null;
    const digest = hashSecret(presented);
    // Cached by digest (never the key) for a few seconds: a lookup per request was a tenth of
    // the CPU of a status read. Every key change in this process clears the cache at once.
    const cacheKey = digest.toString("base64");
    const changedElsewhere = this.forgetIfChangedElsewhere();
    if (changedElsewhere) await changedElsewhere;
    const cached = this.principals.get(cacheKey);
    if (cached && cached.until > Date.now()) return cached.principal;
    // A change announced while the row was being read may have been read before its commit: the
    // principal is then returned but not remembered.
    const generation = this.cacheState.generation;
    const row = await this.s.byHash.get(digest);
    if (!row || !digestsEqual(row.hash, digest) || row.revoked_at !== null) return null;
    const principal = { ...this.principalOf(row), accountDisabled: row.account_disabled_at !== null };
    if (generation !== this.cacheState.generation) return principal;
    if (this.principals.size >= 10_000) this.principals.clear();
    this.principals.set(cacheKey, { principal, until: Date.now() + PRINCIPAL_CACHE_MS });
    return principal;
  }

  private readonly principals = new Map<string, { principal: Principal; until: number }>();
  /**
   * Bumped by every drop of the cache (an object: views made by `in(tx)` share it). `check` is the
   * data_version read shared by every authentication of the current event-loop iteration.
   */
  private readonly cacheState = {
    generation: 0,
    seenDataVersion: null as bigint | null,
    check: null as Promise<void> | null,
  };

  /**
   * Another process (an operator command such as `gengate key revoke`) may have changed keys:
   * SQLite's data_version moves whenever another connection commits, so the cache is dropped
   * then, and a key revoked from the command line is refused on the next request.
   *
   * Read once per event-loop iteration, not per request: every request authenticated in one
   * iteration arrived before that iteration's poll for sockets, so it cannot have been sent after
   * a commit the shared read missed, and the next iteration reads again. Under 32 connections the
   * pragma (a read transaction of its own: two fcntl calls and the WAL header, 7-9 us) ran once per
   * request; see docs/performance.md. Only the root store authenticates (a view inside a
   * transaction would wait for its own transaction behind the shared read).
   */
  private forgetIfChangedElsewhere(): Promise<void> | null {
    // SQLite only; across PostgreSQL instances key changes are announced by cache invalidation.
    if (this.sql.dialect !== "sqlite") return null;
    const state = this.cacheState;
    if (state.check) return state.check;
    const check = this.readDataVersion();
    state.check = check;
    setImmediate(() => {
      if (state.check === check) state.check = null;
    });
    return check;
  }

  private async readDataVersion(): Promise<void> {
    const version = (await this.q<{ data_version: bigint }, []>("PRAGMA data_version").get())!.data_version;
    if (version !== this.cacheState.seenDataVersion) {
      this.cacheState.seenDataVersion = version;
      this.invalidatePrincipals();
    }
  }

  /** Forget cached principals (after any key change). */
  invalidatePrincipals(): void {
    this.cacheState.generation++;
    this.principals.clear();
  }

  private principalOf(row: ApiKeyRow): Omit<Principal, "accountDisabled"> {
    return {
      keyId: row.id,
      keyPrefix: row.prefix,
      accountId: row.account_id,
      canManage: row.can_manage === 1n,
      monthlyLimitMicro: row.monthly_limit_micro,
      writesPerMinute: row.writes_per_minute === null ? null : Number(row.writes_per_minute),
      maxInFlight: row.max_in_flight === null ? null : Number(row.max_in_flight),
      expiresAt: row.expires_at,
      disabled: row.disabled_at !== null,
      allowedModels: listOf(row.allowed_models),
      allowedCidrs: listOf(row.allowed_cidrs)?.map(parseCidr) ?? null,
    };
  }
}

const nameTaken = (name: string) =>
  new DomainError("conflict", `An account named "${name}" already exists.`, { param: "name" });

export function keyView(k: ApiKeyRow) {
  return {
    id: k.id,
    object: "api_key" as const,
    name: k.name,
    prefix: k.prefix,
    can_manage: k.can_manage === 1n,
    monthly_limit_micro: k.monthly_limit_micro === null ? null : k.monthly_limit_micro.toString(),
    writes_per_minute: k.writes_per_minute === null ? null : Number(k.writes_per_minute),
    max_in_flight: k.max_in_flight === null ? null : Number(k.max_in_flight),
    created_at: rfc3339(k.created_at)!,
    revoked_at: rfc3339(k.revoked_at),
    expires_at: rfc3339(k.expires_at),
    disabled: k.disabled_at !== null,
    allowed_models: listOf(k.allowed_models),
    allowed_cidrs: listOf(k.allowed_cidrs),
  };
}

export function accountView(a: Account) {
  return {
    id: a.id,
    object: "account" as const,
    name: a.name,
    currency: a.currency,
    balance_micro: a.balance_micro.toString(),
    held_micro: a.held_micro.toString(),
    available_micro: (a.balance_micro - a.held_micro).toString(),
    created_at: rfc3339(a.created_at),
  };
}
