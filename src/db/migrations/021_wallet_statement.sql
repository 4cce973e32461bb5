-- The wallet as a statement (issue 34, docs/money.md "The wallet's statement"): a job's own ledger
-- entries (its hold, charge and release: at most 3) found by its hold, so a statement page reads the
-- entries of its own jobs only (a page of 50 rows reads at most 150 entries), never the account's
-- history. Entries without a hold (top-ups, adjustments) are not indexed.
CREATE INDEX ledger_entries_hold ON ledger_entries(hold_id, id) WHERE hold_id IS NOT NULL;
