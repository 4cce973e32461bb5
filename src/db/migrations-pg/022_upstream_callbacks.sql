-- Upstream callbacks: the twin of SQLite's migration 022 (see its comments).
CREATE TABLE upstream_callbacks (
  job_id      TEXT COLLATE "C" PRIMARY KEY,
  provider    TEXT NOT NULL,
  payload     TEXT NOT NULL,
  received_at BIGINT NOT NULL
);
CREATE INDEX upstream_callbacks_received ON upstream_callbacks (received_at);
