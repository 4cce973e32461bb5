-- Money in (issue 16): ledger entries may be labelled TOPUP (payments and redeem codes), and a
-- top-up names what paid for it in ref_id (an order id `ord_...` or a redeem code id `rcode_...`).
-- The unique index makes "credited exactly once" a property of the database too: a second
-- credit for the same order or code fails the transaction whatever the code above it does.
-- SQLite cannot change a CHECK in place, so the table is rebuilt (same rows, same ids).
CREATE TABLE ledger_entries_new (
  id                  INTEGER PRIMARY KEY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  kind                TEXT NOT NULL CHECK (kind IN ('topup', 'adjustment', 'hold', 'charge', 'release')),
  source              TEXT NOT NULL CHECK (source IN ('API', 'STUDIO', 'ADMIN', 'TOPUP')),
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
  created_at          INTEGER NOT NULL,
  ref_id              TEXT,
  -- TOPUP is money in only, and always names its cause.
  CHECK (source <> 'TOPUP' OR (kind = 'topup' AND ref_id IS NOT NULL))
) STRICT;
INSERT INTO ledger_entries_new (id, account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
  balance_after_micro, held_after_micro, hold_id, key_id, model_id, request_id, reason, created_at)
SELECT id, account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
  balance_after_micro, held_after_micro, hold_id, key_id, model_id, request_id, reason, created_at
FROM ledger_entries;
DROP TABLE ledger_entries;
ALTER TABLE ledger_entries_new RENAME TO ledger_entries;
CREATE INDEX ledger_entries_account ON ledger_entries(account_id, id);
CREATE INDEX ledger_entries_charges ON ledger_entries(account_id, created_at, key_id, model_id, amount_micro)
  WHERE kind = 'charge';
CREATE INDEX ledger_entries_credits ON ledger_entries(account_id, id) WHERE kind IN ('topup', 'adjustment');
-- One credit per order or code. Refunds are negative adjustments and may name the order again.
CREATE UNIQUE INDEX ledger_entries_topup_ref ON ledger_entries(ref_id) WHERE kind = 'topup' AND ref_id IS NOT NULL;
