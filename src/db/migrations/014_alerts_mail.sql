-- Issue 16, low-balance alerts and email (docs/billing.md "Low-balance alerts", "Email").
-- Times in the new tables are epoch milliseconds, like webhook_deliveries.

-- The account's alert URL (a webhook receiver; NULL: none) and whether the alert may fire
-- (1: armed). A fall below the threshold disarms it; a credit or a threshold change that leaves
-- the available balance at or above the threshold arms it again (no flapping on reserve+release).
ALTER TABLE accounts ADD COLUMN alert_url TEXT CHECK (alert_url IS NULL OR length(alert_url) <= 2048);
ALTER TABLE accounts ADD COLUMN alert_armed INTEGER NOT NULL DEFAULT 1 CHECK (alert_armed IN (0, 1));

-- webhook_deliveries gains an account-level event: BALANCE_LOW, with no request and with its body
-- stored at enqueue time (payload). Job events keep their request and render the record at send
-- time, as before. SQLite cannot change a CHECK in place: rebuilt with the same rows and indexes.
CREATE TABLE webhook_deliveries_new (
  id               TEXT PRIMARY KEY,            -- the webhook-id header: stable per request and event
  request_id       TEXT,                        -- NULL only for account-level events
  account_id       TEXT NOT NULL,
  url              TEXT NOT NULL,
  event            TEXT NOT NULL CHECK (event IN ('COMPLETED', 'FAILED', 'CANCELLED', 'BALANCE_LOW')),
  status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at  INTEGER NOT NULL,            -- due time, or lease expiry while an attempt runs
  last_attempt_at  INTEGER,
  last_status      INTEGER,                     -- HTTP status of the last answer; NULL if none came
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  delivered_at     INTEGER,
  payload          TEXT,                        -- the body of an account-level event (JSON)
  CHECK ((status = 'delivered') = (delivered_at IS NOT NULL)),
  CHECK (CASE WHEN event = 'BALANCE_LOW' THEN request_id IS NULL AND payload IS NOT NULL
              ELSE request_id IS NOT NULL AND payload IS NULL END)
) STRICT;
INSERT INTO webhook_deliveries_new (id, request_id, account_id, url, event, status, attempts, next_attempt_at,
  last_attempt_at, last_status, last_error, created_at, delivered_at)
SELECT id, request_id, account_id, url, event, status, attempts, next_attempt_at,
  last_attempt_at, last_status, last_error, created_at, delivered_at
FROM webhook_deliveries;
DROP TABLE webhook_deliveries;
ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_request ON webhook_deliveries(request_id);

-- The durable mail outbox. A row is written only when [smtp] is configured, in the transaction
-- of its cause (an invite, a reset link, a low-balance alert); the server's sender claims due rows
-- under a lease (next_attempt_at moved forward), retries with back-off, and gives up after a bound
-- recording why. Bodies hold one-time links: they are emptied once the row is sent or failed.
CREATE TABLE mail_outbox (
  id               TEXT PRIMARY KEY,
  kind             TEXT NOT NULL CHECK (kind IN ('invite', 'password_reset', 'balance_low')),
  to_addrs         TEXT NOT NULL,               -- JSON array of addresses
  subject          TEXT NOT NULL,
  text_body        TEXT NOT NULL,
  html_body        TEXT NOT NULL,
  account_id       TEXT,                        -- the account it is about, if any
  status           TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at  INTEGER NOT NULL,            -- due time, or lease expiry while an attempt runs
  last_attempt_at  INTEGER,
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  sent_at          INTEGER,
  CHECK ((status = 'sent') = (sent_at IS NOT NULL))
) STRICT;
CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at) WHERE status = 'pending';
CREATE INDEX mail_outbox_created ON mail_outbox(created_at);
