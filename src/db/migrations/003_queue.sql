-- Jobs of the queue. A job's money is its hold (holds.request_id = jobs.id); the final state and
-- the hold's settlement are written in one transaction.
CREATE TABLE jobs (
  id            TEXT PRIMARY KEY,               -- UUIDv7: sorts by creation time
  seq           INTEGER NOT NULL UNIQUE,         -- monotonic submit order, for queue positions
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  key_id        TEXT,
  model_id      TEXT NOT NULL,
  kind          TEXT NOT NULL,
  source        TEXT NOT NULL CHECK (source IN ('API', 'STUDIO')),
  provider      TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED')),
  input         TEXT NOT NULL,                   -- JSON, as validated
  quote         TEXT NOT NULL,                   -- JSON: unit, quantity, unit price, amount
  hold_id       TEXT NOT NULL UNIQUE REFERENCES holds(id),
  webhook_url   TEXT,
  upstream_id   TEXT,                            -- the upstream's own id, once known (resume, not resubmit)
  attempt       INTEGER NOT NULL DEFAULT 0,
  lease_owner   TEXT,
  lease_until   INTEGER,                         -- ms; a running job whose lease lapsed is recovered
  not_before    INTEGER NOT NULL DEFAULT 0,      -- ms; capacity back-off
  deadline_at   INTEGER NOT NULL,                -- ms; the model's time limit from submit
  output        TEXT,                            -- JSON of the model output (media as output indexes)
  actual_units  TEXT,
  error_code    TEXT,
  error_message TEXT,
  created_at    INTEGER NOT NULL,                -- ms
  started_at    INTEGER,
  completed_at  INTEGER,
  CHECK ((status IN ('COMPLETED', 'FAILED', 'CANCELLED')) = (completed_at IS NOT NULL))
) STRICT;
CREATE INDEX jobs_queued ON jobs(provider, model_id, seq) WHERE status = 'IN_QUEUE';
CREATE INDEX jobs_running ON jobs(lease_until) WHERE status = 'IN_PROGRESS';
CREATE INDEX jobs_account ON jobs(account_id, id);
CREATE INDEX jobs_open_by_key ON jobs(key_id) WHERE status IN ('IN_QUEUE', 'IN_PROGRESS');

CREATE TABLE job_logs (
  job_id   TEXT NOT NULL,
  n        INTEGER NOT NULL,
  at       INTEGER NOT NULL,
  level    TEXT NOT NULL,
  message  TEXT NOT NULL,
  PRIMARY KEY (job_id, n)
) STRICT, WITHOUT ROWID;

-- Media produced by a job, copied into the local store before the job is COMPLETED.
CREATE TABLE job_outputs (
  job_id        TEXT NOT NULL,
  idx           INTEGER NOT NULL,
  path          TEXT NOT NULL,                   -- relative to the data dir's files/
  content_type  TEXT NOT NULL,
  size          INTEGER NOT NULL,
  sha256        TEXT NOT NULL,
  downloads     INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  PRIMARY KEY (job_id, idx)
) STRICT, WITHOUT ROWID;

-- Idempotency-Key: scope is the API key; only 2xx answers are stored; kept 24 hours.
CREATE TABLE idempotency (
  key_id       TEXT NOT NULL,
  idem_key     TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('running', 'done')),
  status       INTEGER,
  body         TEXT,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (key_id, idem_key)
) STRICT, WITHOUT ROWID;
