-- The twin of SQLite's migration 027 (usage_daily: spend per account, UTC day, key and model, kept by
-- Ledger.settle in the settlement's transaction; see its comments), backfilled from the charges.
CREATE TABLE usage_daily (
  account_id   TEXT COLLATE "C" NOT NULL,
  day          BIGINT NOT NULL,
  key_id       TEXT COLLATE "C" NOT NULL,
  model_id     TEXT COLLATE "C" NOT NULL,
  spent_micro  BIGINT NOT NULL CHECK (spent_micro >= 0),
  calls        BIGINT NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (account_id, day, key_id, model_id)
);

INSERT INTO usage_daily (account_id, day, key_id, model_id, spent_micro, calls)
  SELECT account_id, created_at / 86400, coalesce(key_id, ''), coalesce(model_id, ''),
         sum(amount_micro), count(*)
    FROM ledger_entries WHERE kind = 'charge'
    GROUP BY account_id, created_at / 86400, coalesce(key_id, ''), coalesce(model_id, '');
