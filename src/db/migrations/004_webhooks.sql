-- Webhooks: a per-account signing secret (Standard Webhooks "whsec_") and a durable outbox.
-- Times in this file are epoch milliseconds.
CREATE TABLE webhook_secrets (
  account_id       TEXT PRIMARY KEY REFERENCES accounts(id),
  secret           TEXT NOT NULL,
  previous_secret  TEXT,                        -- still signed with until previous_until (rotation overlap)
  previous_until   INTEGER,
  created_at       INTEGER NOT NULL,
  rotated_at       INTEGER,
  CHECK ((previous_secret IS NULL) = (previous_until IS NULL))
) STRICT;

-- One row per (request, final event), written in the transaction that commits the final state,
-- so a delivery exists if and only if that state committed. The dispatcher claims a due row by
-- moving next_attempt_at forward (a lease): a crash mid-attempt retries later, never loses it.
CREATE TABLE webhook_deliveries (
  id               TEXT PRIMARY KEY,            -- the webhook-id header: stable per request and event
  request_id       TEXT NOT NULL,
  account_id       TEXT NOT NULL,
  url              TEXT NOT NULL,
  event            TEXT NOT NULL CHECK (event IN ('COMPLETED', 'FAILED', 'CANCELLED')),
  status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at  INTEGER NOT NULL,            -- due time, or lease expiry while an attempt runs
  last_attempt_at  INTEGER,
  last_status      INTEGER,                     -- HTTP status of the last answer; NULL if none came
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  delivered_at     INTEGER,
  CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_request ON webhook_deliveries(request_id);
