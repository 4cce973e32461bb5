-- Shared secrets: the twin of SQLite's migration 018 (see its comments).
CREATE TABLE shared_secrets (
  name       TEXT COLLATE "C" PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
  value      TEXT NOT NULL CHECK (length(value) > 0),
  created_at BIGINT NOT NULL
);
