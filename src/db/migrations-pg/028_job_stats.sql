-- The twin of SQLite's migration 028 (the Requests figures' rollup; see its comments). The histogram
-- is JSON text as in SQLite (so `gengate migrate-data` copies it as is), changed through jsonb; the
-- bucket is computed in numeric (log(2.0, x)), exact at powers of two like SQLite's log2.
CREATE TABLE job_stats_daily (
  account_id TEXT COLLATE "C" NOT NULL,
  day        BIGINT NOT NULL,
  key_id     TEXT COLLATE "C" NOT NULL,
  model_id   TEXT COLLATE "C" NOT NULL,
  source     TEXT COLLATE "C" NOT NULL,
  status     TEXT COLLATE "C" NOT NULL CHECK (status IN ('COMPLETED', 'FAILED', 'CANCELLED')),
  n          BIGINT NOT NULL CHECK (n > 0),
  latency    TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (account_id, day, key_id, model_id, source, status)
);

INSERT INTO job_stats_daily (account_id, day, key_id, model_id, source, status, n, latency)
SELECT account_id, day, key_id, model_id, source, status, sum(c), jsonb_object_agg(bucket::text, c)::text
  FROM (SELECT account_id, created_at / 86400000 AS day, coalesce(key_id, '') AS key_id, model_id, source, status,
               CASE WHEN completed_at - created_at < 1 THEN 0
                    ELSE floor(8 * log(2.0, (completed_at - created_at)::numeric))::bigint + 1 END AS bucket,
               count(*) AS c
          FROM jobs WHERE status IN ('COMPLETED', 'FAILED', 'CANCELLED')
         GROUP BY 1, 2, 3, 4, 5, 6, 7) b
 GROUP BY account_id, day, key_id, model_id, source, status;

CREATE INDEX jobs_open_account ON jobs(account_id, created_at) WHERE status IN ('IN_QUEUE', 'IN_PROGRESS');
