-- The twin of SQLite's migration 025 (a job's route and its fallback count; see its comments).
ALTER TABLE jobs ADD COLUMN route BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN route_tries BIGINT NOT NULL DEFAULT 0;
