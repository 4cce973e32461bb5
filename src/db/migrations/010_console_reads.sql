-- Indexes for the console's read side (issue 15), each measured on an account with 10,000 jobs
-- (docs/money.md, "Console figures"):
-- Usage: an account's charges in a time range, covering (no table lookups) the per-day sums.
CREATE INDEX ledger_entries_charges ON ledger_entries(account_id, created_at, key_id, model_id, amount_micro)
  WHERE kind = 'charge';
-- Billing and the wallet's ADMIN/TOPUP filter: the few credit entries among many job entries.
CREATE INDEX ledger_entries_credits ON ledger_entries(account_id, id) WHERE kind IN ('topup', 'adjustment');
-- Requests filtered by key, newest first; a key's last use.
CREATE INDEX jobs_by_key ON jobs(key_id, id);
