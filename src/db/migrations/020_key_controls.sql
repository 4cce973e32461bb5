-- Key controls (docs/api.md "Keys"): when a key stops working on its own, whether its owner
-- switched it off, and which models and client addresses it may be used for. NULL: no limit
-- (never expires, every model, anywhere). The lists are JSON arrays of strings, validated and
-- bounded by the API (at most 100 entries of at most 200 characters) before they are stored.
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN disabled_at INTEGER;
ALTER TABLE api_keys ADD COLUMN allowed_models TEXT;
ALTER TABLE api_keys ADD COLUMN allowed_cidrs TEXT;

-- A secret the console shows once after a redirect (post/redirect/get: a created key, an invite
-- link), kept for the session that made it until the page that shows it reads and clears it (at
-- most 10 minutes; src/people/sessions.ts). JSON; NULL: nothing to show.
ALTER TABLE sessions ADD COLUMN flash TEXT;
