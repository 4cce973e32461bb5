-- The Requests figures from a rollup (issue 36, docs/performance.md "Issue 36: Requests figures from a
-- rollup"): one row per account, UTC day of created_at (created_at / 86400000), key ('' = none),
-- model, source and final status, with how many jobs ended there (n) and their latency histogram
-- (latency: a JSON object, bucket -> count). Written by JobStore in each job's final-state
-- transaction (src/queue/job-stats-store.ts), so a page of figures reads at most a row per day and
-- combination (2,046 for 31 days of 5 keys and 5 models at 1,000,000 jobs: 15 ms) instead of sorting
-- every job of the period (0.9-2 s for those 346,000 jobs before). Buckets are log-scale: 0 under 1 ms, else
-- floor(8 * log2(ms)) + 1, each about 9 % wide (2^(1/8)). The histogram is one value, not one row per
-- bucket: rows per bucket made 41,500 rows for the same 31 days (60 ms to read).
CREATE TABLE job_stats_daily (
  account_id TEXT NOT NULL,
  day        INTEGER NOT NULL,
  key_id     TEXT NOT NULL,
  model_id   TEXT NOT NULL,
  source     TEXT NOT NULL,
  status     TEXT NOT NULL CHECK (status IN ('COMPLETED', 'FAILED', 'CANCELLED')),
  n          INTEGER NOT NULL CHECK (n > 0),
  latency    TEXT NOT NULL,
  PRIMARY KEY (account_id, day, key_id, model_id, source, status)
);

INSERT INTO job_stats_daily (account_id, day, key_id, model_id, source, status, n, latency)
SELECT account_id, day, key_id, model_id, source, status, sum(c), json_group_object(CAST(bucket AS TEXT), c)
  FROM (SELECT account_id, created_at / 86400000 AS day, coalesce(key_id, '') AS key_id, model_id, source, status,
               CASE WHEN completed_at - created_at < 1 THEN 0
                    ELSE CAST(floor(8 * log2(completed_at - created_at)) AS INTEGER) + 1 END AS bucket,
               count(*) AS c
          FROM jobs WHERE status IN ('COMPLETED', 'FAILED', 'CANCELLED')
         GROUP BY account_id, day, key_id, model_id, source, status, bucket)
 GROUP BY account_id, day, key_id, model_id, source, status;

-- Open jobs are counted live: at most the in-flight caps' worth per account, found by this index
-- instead of the period's walk of jobs_account.
CREATE INDEX jobs_open_account ON jobs(account_id, created_at) WHERE status IN ('IN_QUEUE', 'IN_PROGRESS');
