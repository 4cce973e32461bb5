-- Key controls (docs/api.md "Keys"): when a key stops working on its own, whether its owner
-- switched it off, and which models and client addresses it may be used for. NULL: no limit
-- (never expires, every model, anywhere). The lists are JSON arrays of strings, validated and
-- bounded by the API (at most 100 entries of at most 200 characters) before they are stored.
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN disabled_at INTEGER;
ALTER TABLE api_keys ADD COLUMN allowed_models TEXT;
ALTER TABLE api_keys ADD COLUMN allowed_cidrs TEXT;
