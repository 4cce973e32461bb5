-- The Requests figures from a rollup (issue 36, docs/performance.md "Issue 36: Requests figures from a
-- rollup"): one row per account, UTC day of created_at (created_at / 86400000), key ('' = none),
-- model, source, final status and latency bucket, counting the jobs that ended there. Written by
-- JobStore in each job's final-state transaction (src/queue/job-stats-store.ts), so a page of figures
-- reads the period's rollup rows (about 800 a day for 5 keys and 5 models) instead of sorting every
-- job of the period (800 ms for 344,000 jobs before). Buckets are log-scale: 0 for under 1 ms, else
-- floor(8 * log2(ms)) + 1, each about 9 % wide (2^(1/8)). WITHOUT ROWID: the key is the table.
CREATE TABLE job_stats_daily (
  account_id TEXT NOT NULL,
  day        INTEGER NOT NULL,
  key_id     TEXT NOT NULL,
  model_id   TEXT NOT NULL,
  source     TEXT NOT NULL,
  status     TEXT NOT NULL CHECK (status IN ('COMPLETED', 'FAILED', 'CANCELLED')),
  bucket     INTEGER NOT NULL,
  n          INTEGER NOT NULL CHECK (n > 0),
  PRIMARY KEY (account_id, day, key_id, model_id, source, status, bucket)
) WITHOUT ROWID;

INSERT INTO job_stats_daily (account_id, day, key_id, model_id, source, status, bucket, n)
SELECT account_id, created_at / 86400000, coalesce(key_id, ''), model_id, source, status,
       CASE WHEN completed_at - created_at < 1 THEN 0
            ELSE CAST(floor(8 * log2(completed_at - created_at)) AS INTEGER) + 1 END AS bucket,
       count(*)
  FROM jobs WHERE status IN ('COMPLETED', 'FAILED', 'CANCELLED')
 GROUP BY account_id, created_at / 86400000, coalesce(key_id, ''), model_id, source, status, bucket;

-- Open jobs are counted live: at most the in-flight caps' worth per account, found by this index
-- instead of the period's walk of jobs_account.
CREATE INDEX jobs_open_account ON jobs(account_id, created_at) WHERE status IN ('IN_QUEUE', 'IN_PROGRESS');
