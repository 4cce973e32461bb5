-- Fewer index writes per job, and sweeps that read indexes instead of every job ever recorded.
-- The per-key counters of migration 005 replaced the only readers of these two partial indexes;
-- each still cost an index insert and a delete per job and per hold.
DROP INDEX jobs_open_by_key;
DROP INDEX holds_open_by_key;
-- The queue sweep (every 10 s) looks for open jobs past their model's time limit; it scanned the
-- whole jobs table through the seq index.
CREATE INDEX jobs_open_deadline ON jobs(deadline_at) WHERE status IN ('IN_QUEUE', 'IN_PROGRESS');
-- The hourly idempotency purge deletes keys older than 24 h; it scanned the whole table.
CREATE INDEX idempotency_created ON idempotency(created_at);
