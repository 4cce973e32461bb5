-- Redeem codes (issue 16): batches made by the operator, their codes (only the SHA-256 of each
-- code's normalised form is stored: the code itself is shown once, when the batch is made), and
-- the failed redeem attempts that throttle an account (5 per hour). Owned by RedeemCodeStore
-- (src/codes/store.ts).
CREATE TABLE redeem_batches (
  id            TEXT PRIMARY KEY,                   -- rbatch_...
  currency      TEXT NOT NULL CHECK (currency IN ('USD', 'RUB')),
  amount_micro  INTEGER NOT NULL CHECK (amount_micro > 0),
  code_count    INTEGER NOT NULL CHECK (code_count BETWEEN 1 AND 1000),
  note          TEXT CHECK (note IS NULL OR length(note) <= 500),
  expires_at    INTEGER,                            -- epoch seconds; NULL: never
  created_at    INTEGER NOT NULL,
  created_by    TEXT,                               -- the person (console); NULL: the CLI or the admin API
  revoked_at    INTEGER,                            -- last time its unused codes were revoked
  CHECK (expires_at IS NULL OR expires_at > created_at)
) STRICT;

CREATE TABLE redeem_codes (
  id                   TEXT PRIMARY KEY,            -- rcode_...: the ledger entry's ref_id
  batch_id             TEXT NOT NULL REFERENCES redeem_batches(id),
  code_hash            BLOB NOT NULL UNIQUE CHECK (length(code_hash) = 32),
  revoked_at           INTEGER,
  redeemed_at          INTEGER,
  redeemed_account_id  TEXT REFERENCES accounts(id),
  redeemed_by          TEXT,                        -- the key (key_...) or person (person_...) who redeemed it
  -- Redeemed: all three fields or none.
  CHECK ((redeemed_at IS NULL) = (redeemed_account_id IS NULL)
     AND (redeemed_at IS NULL) = (redeemed_by IS NULL)),
  -- Only an unused code is revoked.
  CHECK (revoked_at IS NULL OR redeemed_at IS NULL)
) STRICT;
CREATE INDEX redeem_codes_batch ON redeem_codes(batch_id);

-- Failed redeem attempts (unknown, used, expired, revoked code; wrong currency), per account.
CREATE TABLE redeem_failures (
  account_id  TEXT NOT NULL,
  at          INTEGER NOT NULL                      -- epoch seconds
) STRICT;
CREATE INDEX redeem_failures_account ON redeem_failures(account_id, at);
