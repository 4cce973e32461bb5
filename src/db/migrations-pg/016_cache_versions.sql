-- Cache invalidation across instances: the twin of SQLite's migration 016 (see its comments).
CREATE TABLE cache_versions (
  scope      TEXT COLLATE "C" PRIMARY KEY CHECK (length(scope) BETWEEN 1 AND 64),
  version    BIGINT NOT NULL CHECK (version > 0),
  changed_at BIGINT NOT NULL
);
