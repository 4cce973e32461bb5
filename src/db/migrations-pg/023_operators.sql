-- The twin of SQLite's migration 023 (operators disable accounts and people; see its comments).
ALTER TABLE accounts ADD COLUMN disabled_at BIGINT;
ALTER TABLE accounts ADD COLUMN disabled_reason TEXT COLLATE "C";
ALTER TABLE people ADD COLUMN disabled_reason TEXT COLLATE "C";
CREATE INDEX jobs_by_model ON jobs(model_id, id);
