-- The twin of SQLite's migration 026 (the margins report's index on a job's end time; see its comments).
CREATE INDEX jobs_completed ON jobs(completed_at) WHERE completed_at IS NOT NULL;
