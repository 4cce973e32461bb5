-- Accounts and their API keys. Money columns are integer micro-units of the account currency.
CREATE TABLE accounts (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  currency      TEXT NOT NULL CHECK (currency IN ('USD', 'RUB')),
  balance_micro INTEGER NOT NULL DEFAULT 0 CHECK (balance_micro >= 0),
  held_micro    INTEGER NOT NULL DEFAULT 0 CHECK (held_micro >= 0),
  created_at    INTEGER NOT NULL,
  -- available = balance - held can never be negative: a hold is only placed when it fits.
  CHECK (held_micro <= balance_micro)
) STRICT;

CREATE TABLE api_keys (
  id                  TEXT PRIMARY KEY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  name                TEXT NOT NULL,
  -- First characters of the key, shown in listings so a person can tell keys apart.
  prefix              TEXT NOT NULL,
  -- SHA-256 of the full key; the key itself is never stored.
  hash                BLOB NOT NULL UNIQUE,
  can_manage          INTEGER NOT NULL DEFAULT 0 CHECK (can_manage IN (0, 1)),
  monthly_limit_micro INTEGER CHECK (monthly_limit_micro IS NULL OR monthly_limit_micro >= 0),
  writes_per_minute   INTEGER CHECK (writes_per_minute IS NULL OR writes_per_minute > 0),
  max_in_flight       INTEGER CHECK (max_in_flight IS NULL OR max_in_flight > 0),
  created_at          INTEGER NOT NULL,
  last_used_at        INTEGER,
  revoked_at          INTEGER
) STRICT;

CREATE INDEX api_keys_account ON api_keys(account_id);
