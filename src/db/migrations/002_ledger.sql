-- The wallet: every balance movement is one immutable entry, written in the same transaction as the
-- state change that caused it. balance = sum(balance_delta_micro); held = sum(held_delta_micro).
CREATE TABLE ledger_entries (
  id                  INTEGER PRIMARY KEY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  kind                TEXT NOT NULL CHECK (kind IN ('topup', 'adjustment', 'hold', 'charge', 'release')),
  source              TEXT NOT NULL CHECK (source IN ('API', 'STUDIO', 'ADMIN')),
  -- The amount the entry is about (always >= 0); its effect is in the two delta columns.
  amount_micro        INTEGER NOT NULL CHECK (amount_micro >= 0),
  balance_delta_micro INTEGER NOT NULL,
  held_delta_micro    INTEGER NOT NULL,
  balance_after_micro INTEGER NOT NULL CHECK (balance_after_micro >= 0),
  held_after_micro    INTEGER NOT NULL CHECK (held_after_micro >= 0),
  hold_id             TEXT,
  key_id              TEXT,
  model_id            TEXT,
  request_id          TEXT,
  reason              TEXT,
  created_at          INTEGER NOT NULL
) STRICT;
CREATE INDEX ledger_entries_account ON ledger_entries(account_id, id);

-- A reservation. It resolves exactly once: open -> settled | released, by compare-and-swap on status.
CREATE TABLE holds (
  id                 TEXT PRIMARY KEY,
  account_id         TEXT NOT NULL REFERENCES accounts(id),
  key_id             TEXT,
  model_id           TEXT,
  request_id         TEXT,
  source             TEXT NOT NULL CHECK (source IN ('API', 'STUDIO', 'ADMIN')),
  currency           TEXT NOT NULL CHECK (currency IN ('USD', 'RUB')),
  amount_micro       INTEGER NOT NULL CHECK (amount_micro >= 0),
  quoted_usd_micro   INTEGER NOT NULL CHECK (quoted_usd_micro >= 0),
  -- micro-RUB per 1 USD fixed at reservation (RUB accounts); every later conversion uses it.
  fx_rate_micro      INTEGER,
  status             TEXT NOT NULL CHECK (status IN ('open', 'settled', 'released')),
  charged_micro      INTEGER CHECK (charged_micro IS NULL OR (charged_micro >= 0 AND charged_micro <= amount_micro)),
  charged_usd_micro  INTEGER CHECK (charged_usd_micro IS NULL OR charged_usd_micro <= quoted_usd_micro),
  created_at         INTEGER NOT NULL,
  resolved_at        INTEGER,
  CHECK ((status = 'open') = (resolved_at IS NULL))
) STRICT;
CREATE INDEX holds_open_by_key ON holds(key_id) WHERE status = 'open';
CREATE INDEX holds_request ON holds(request_id);

-- Spend per key, per model and per calendar month (UTC), maintained with every charge.
CREATE TABLE key_spend (
  key_id       TEXT NOT NULL,
  month        TEXT NOT NULL,
  model_id     TEXT NOT NULL,
  spent_micro  INTEGER NOT NULL DEFAULT 0 CHECK (spent_micro >= 0),
  calls        INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, month, model_id)
) STRICT;

CREATE TABLE fx_rates (
  currency    TEXT PRIMARY KEY CHECK (currency IN ('RUB')),
  rate_micro  INTEGER NOT NULL CHECK (rate_micro > 0),
  source      TEXT NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;
