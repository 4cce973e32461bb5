-- The final answer an upstream posted to gengate about a job (a cog server's terminal webhook,
-- src/providers/cog/webhooks.ts): kept so that the worker waiting on it reads it on any instance
-- and after a restart. The first final answer wins (INSERT .. ON CONFLICT DO NOTHING): a replay
-- changes nothing. Rows older than 7 days are pruned when a new one is written.
CREATE TABLE upstream_callbacks (
  job_id      TEXT PRIMARY KEY,
  provider    TEXT NOT NULL,
  payload     TEXT NOT NULL,
  -- Epoch ms of the answer's arrival.
  received_at INTEGER NOT NULL
) STRICT;
CREATE INDEX upstream_callbacks_received ON upstream_callbacks (received_at);
