-- Secrets every instance must share when database_url is PostgreSQL (docs/scale-out.md): the
-- link-signing secrets and the admin token's SHA-256, one row each (src/server/shared-secrets.ts).
-- Created once under a race (INSERT .. ON CONFLICT DO NOTHING, then read back). On SQLite the
-- data dir's files hold them as before and this table stays empty (kept for schema parity).
CREATE TABLE shared_secrets (
  name       TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
  value      TEXT NOT NULL CHECK (length(value) > 0),
  -- Epoch seconds of the row's last write (creation or rotation).
  created_at INTEGER NOT NULL
) STRICT;
