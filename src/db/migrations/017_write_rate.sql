-- Write-rate windows shared by every instance (src/limits/rate-limit.ts, docs/scale-out.md): one
-- row per API key, its current one-minute window, counted by one conditional upsert per write.
-- The server on SQLite (one instance) counts in memory and leaves this table empty; it exists in
-- both dialects so the schemas stay equal.
CREATE TABLE write_rate_windows (
  key_id       TEXT PRIMARY KEY,
  -- Epoch ms of the window's first write.
  window_start INTEGER NOT NULL,
  count        INTEGER NOT NULL CHECK (count >= 0)
) STRICT;
