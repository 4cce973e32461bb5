-- Expired and deleted uploads lose their row instead of being marked deleted (issue 36: a box's
-- database stays flat under steady traffic; a marked row stayed forever, 356 bytes per upload).
-- Nothing read a marked row but to answer that the file does not exist, as a missing row does; the
-- storage usage triggers (migration 008) counted a marked row out when it was marked.
DELETE FROM files WHERE deleted_at IS NOT NULL;
