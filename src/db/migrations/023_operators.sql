-- Operators disable an account or a person (docs/console.md "Operator pages"). A disabled account's
-- keys are refused (401) and its console sessions end; a disabled person cannot sign in. people
-- already has disabled_at (009); the reason is required when disabling and kept until enabled again.
ALTER TABLE accounts ADD COLUMN disabled_at INTEGER;
ALTER TABLE accounts ADD COLUMN disabled_reason TEXT;
ALTER TABLE people ADD COLUMN disabled_reason TEXT;

-- The operator's Requests page lists every account's requests newest first (the primary key's
-- order); filtered by model it walks this index instead of every job of other models.
CREATE INDEX jobs_by_model ON jobs(model_id, id);
