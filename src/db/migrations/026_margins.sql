-- The margins report (GET /admin/v1/margins, docs/providers.md "Margins") reads the jobs that ended
-- in a date range: this index on the end time makes it read only that range (its rows, then each
-- one's hold by primary key), never the history before or after it. Measured on 100,000 jobs:
-- docs/providers.md "Margins". Open jobs (completed_at NULL) are left out of the index.
CREATE INDEX jobs_completed ON jobs(completed_at) WHERE completed_at IS NOT NULL;
