-- Cache invalidation across instances (src/db/invalidation.ts, docs/scale-out.md "Across instances"):
-- one row per cache scope ('keys', 'limits', 'settings'...), its version bumped in the transaction
-- of every change to what the scope caches. Instances poll this table (a handful of rows) as the
-- guarantee behind the bus's hints; on SQLite it also carries the CLI's changes to the server.
CREATE TABLE cache_versions (
  scope      TEXT PRIMARY KEY CHECK (length(scope) BETWEEN 1 AND 64),
  version    INTEGER NOT NULL CHECK (version > 0),
  -- Epoch seconds of the last bump (for operators; nothing reads it).
  changed_at INTEGER NOT NULL
) STRICT;
