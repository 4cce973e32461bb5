-- The twin of SQLite's migration 021 (the wallet's statement; see its comments).
CREATE INDEX ledger_entries_hold ON ledger_entries(hold_id, id) WHERE hold_id IS NOT NULL;
