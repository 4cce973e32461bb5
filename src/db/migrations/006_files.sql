-- Uploaded files. The bytes live under <data dir>/files/uploads/; a row exists only for a complete
-- upload (the bytes are written to a temp name and renamed before the row is inserted).
CREATE TABLE files (
  id            TEXT PRIMARY KEY,              -- "file_" + 24 base62 characters
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  key_id        TEXT,
  content_type  TEXT NOT NULL,
  size          INTEGER NOT NULL CHECK (size > 0),
  sha256        TEXT NOT NULL,
  path          TEXT NOT NULL,
  width         INTEGER,
  height        INTEGER,
  created_at    INTEGER NOT NULL,              -- ms
  expires_at    INTEGER NOT NULL,              -- ms
  deleted_at    INTEGER
) STRICT;
CREATE INDEX files_account ON files(account_id, id);
CREATE INDEX files_expiry ON files(expires_at) WHERE deleted_at IS NULL;
CREATE INDEX job_outputs_expiry ON job_outputs(expires_at);
