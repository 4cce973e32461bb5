-- The twin of SQLite's migration 024 (a job's upstream cost; see its comments).
ALTER TABLE jobs ADD COLUMN cost_usd_micro BIGINT;
