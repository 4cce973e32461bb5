-- The twin of SQLite's migration 020 (key controls; see its comments).
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
ALTER TABLE api_keys ADD COLUMN disabled_at BIGINT;
ALTER TABLE api_keys ADD COLUMN allowed_models TEXT COLLATE "C";
ALTER TABLE api_keys ADD COLUMN allowed_cidrs TEXT COLLATE "C";
ALTER TABLE sessions ADD COLUMN flash TEXT COLLATE "C";
