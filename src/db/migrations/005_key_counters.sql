-- Per-key running totals, maintained in the same transactions as the changes they count, so the
-- in-flight cap and the monthly limit are O(1) checks instead of scans over open jobs and holds.
ALTER TABLE api_keys ADD COLUMN open_jobs INTEGER NOT NULL DEFAULT 0 CHECK (open_jobs >= 0);
ALTER TABLE api_keys ADD COLUMN held_micro INTEGER NOT NULL DEFAULT 0 CHECK (held_micro >= 0);
UPDATE api_keys SET
  open_jobs = (SELECT count(*) FROM jobs WHERE jobs.key_id = api_keys.id AND status IN ('IN_QUEUE', 'IN_PROGRESS')),
  held_micro = (SELECT coalesce(sum(amount_micro), 0) FROM holds WHERE holds.key_id = api_keys.id AND status = 'open');
