-- Spend per account, UTC day, key and model, kept by Ledger.settle in the settlement's own
-- transaction (one upsert next to key_spend's). The console's usage, the overview and
-- GET /v1/account/spend read it instead of grouping the charge entries of their range: at
-- 1,000,000 requests over 90 days a 30-day usage page grouped ~333,000 entries (56.9 ms at
-- 200,000 requests, docs/performance.md "Issue 36"); the rollup holds at most days x keys x models
-- rows whatever the traffic. Equal to the charge entries to the micro-unit (a property test).
-- key_id '' is a charge without a key (the studio's), model_id '' one that named no model: the
-- primary key needs values, and the readers map '' back to null / "".
CREATE TABLE usage_daily (
  account_id   TEXT NOT NULL,
  day          INTEGER NOT NULL,  -- created_at / 86400 of the charge entry (epoch days, UTC)
  key_id       TEXT NOT NULL,
  model_id     TEXT NOT NULL,
  spent_micro  INTEGER NOT NULL CHECK (spent_micro >= 0),
  calls        INTEGER NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (account_id, day, key_id, model_id)
) STRICT, WITHOUT ROWID;

-- The history so far, from the charge entries themselves (one charge entry per settled hold).
INSERT INTO usage_daily (account_id, day, key_id, model_id, spent_micro, calls)
  SELECT account_id, created_at / 86400, coalesce(key_id, ''), coalesce(model_id, ''),
         sum(amount_micro), count(*)
    FROM ledger_entries WHERE kind = 'charge'
    GROUP BY account_id, created_at / 86400, coalesce(key_id, ''), coalesce(model_id, '');
