-- Bytes held by uploads and outputs, kept by triggers in the transactions that change the rows, so
-- /readyz reads two numbers instead of summing every row (36 ms per million outputs, per probe).
CREATE TABLE storage_usage (
  kind   TEXT PRIMARY KEY CHECK (kind IN ('uploads', 'outputs')),
  bytes  INTEGER NOT NULL CHECK (bytes >= 0)
) STRICT, WITHOUT ROWID;
INSERT INTO storage_usage (kind, bytes) VALUES
  ('uploads', (SELECT coalesce(sum(size), 0) FROM files WHERE deleted_at IS NULL)),
  ('outputs', (SELECT coalesce(sum(size), 0) FROM job_outputs));

CREATE TRIGGER files_usage_insert AFTER INSERT ON files WHEN NEW.deleted_at IS NULL
BEGIN
  UPDATE storage_usage SET bytes = bytes + NEW.size WHERE kind = 'uploads';
END;
CREATE TRIGGER files_usage_mark_deleted AFTER UPDATE OF deleted_at ON files
  WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL
BEGIN
  UPDATE storage_usage SET bytes = bytes - OLD.size WHERE kind = 'uploads';
END;
CREATE TRIGGER files_usage_delete AFTER DELETE ON files WHEN OLD.deleted_at IS NULL
BEGIN
  UPDATE storage_usage SET bytes = bytes - OLD.size WHERE kind = 'uploads';
END;
CREATE TRIGGER job_outputs_usage_insert AFTER INSERT ON job_outputs
BEGIN
  UPDATE storage_usage SET bytes = bytes + NEW.size WHERE kind = 'outputs';
END;
CREATE TRIGGER job_outputs_usage_delete AFTER DELETE ON job_outputs
BEGIN
  UPDATE storage_usage SET bytes = bytes - OLD.size WHERE kind = 'outputs';
END;
