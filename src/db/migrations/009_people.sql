-- People who sign in to the web console, their memberships in accounts, and everything sign-in
-- needs: invites, password resets, sessions, two-factor secrets and recovery codes, and the
-- attempts that sign-in throttling counts. Secrets (invite and reset tokens, session ids, recovery
-- codes) are stored only as SHA-256 digests; passwords only as argon2id hashes (Bun.password).
-- Owner: PeopleStore (src/people/store.ts). See docs/console.md.
CREATE TABLE people (
  id                   TEXT PRIMARY KEY,
  -- Lower-cased and trimmed; the sign-in name.
  email                TEXT NOT NULL UNIQUE,
  -- argon2id (PHC string); NULL until the person sets one through an invite.
  password_hash        TEXT,
  operator             INTEGER NOT NULL DEFAULT 0 CHECK (operator IN (0, 1)),
  -- Base32 TOTP secret (RFC 6238); totp_enabled_at is set once a code has confirmed it.
  totp_secret          TEXT,
  totp_enabled_at      INTEGER,
  -- The last TOTP time step accepted: a code is never accepted twice (RFC 6238 section 5.2).
  totp_last_step       INTEGER,
  created_at           INTEGER NOT NULL,
  password_changed_at  INTEGER,
  disabled_at          INTEGER
) STRICT;

CREATE TABLE memberships (
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  person_id   TEXT NOT NULL REFERENCES people(id),
  role        TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (account_id, person_id)
) STRICT;
CREATE INDEX memberships_person ON memberships(person_id);

-- One-time invite links and sign-up codes. account_id NULL: accepting creates a new account with
-- the person as its owner (sign-up by invite); otherwise the person joins that account with role.
CREATE TABLE invites (
  id           TEXT PRIMARY KEY,
  token_hash   BLOB NOT NULL UNIQUE,
  email        TEXT,
  account_id   TEXT REFERENCES accounts(id),
  role         TEXT NOT NULL DEFAULT 'owner' CHECK (role IN ('owner', 'member')),
  operator     INTEGER NOT NULL DEFAULT 0 CHECK (operator IN (0, 1)),
  created_by   TEXT REFERENCES people(id),
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  used_at      INTEGER,
  used_by      TEXT REFERENCES people(id),
  revoked_at   INTEGER
) STRICT;

CREATE TABLE password_resets (
  token_hash  BLOB PRIMARY KEY,
  person_id   TEXT NOT NULL REFERENCES people(id),
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
) STRICT;

-- Console sessions: the cookie holds an opaque random id; only its SHA-256 is stored.
CREATE TABLE sessions (
  id           TEXT PRIMARY KEY,
  token_hash   BLOB NOT NULL UNIQUE,
  person_id    TEXT NOT NULL REFERENCES people(id),
  -- The account the person is looking at (they may belong to several).
  account_id   TEXT REFERENCES accounts(id),
  csrf_token   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  revoked_at   INTEGER,
  user_agent   TEXT,
  ip           TEXT
) STRICT;
CREATE INDEX sessions_person ON sessions(person_id);

CREATE TABLE recovery_codes (
  person_id   TEXT NOT NULL REFERENCES people(id),
  code_hash   BLOB NOT NULL,
  used_at     INTEGER,
  PRIMARY KEY (person_id, code_hash)
) STRICT;

-- Failed sign-ins, counted per email and per client address over a sliding window.
CREATE TABLE signin_failures (
  subject  TEXT NOT NULL,
  at_ms    INTEGER NOT NULL
) STRICT;
CREATE INDEX signin_failures_subject ON signin_failures(subject, at_ms);

-- Who created a key (members manage only their own keys); NULL: the API, the CLI or the operator.
ALTER TABLE api_keys ADD COLUMN created_by TEXT REFERENCES people(id);

-- The account's low-balance alert threshold (micro-units of its currency); NULL: none.
ALTER TABLE accounts ADD COLUMN alert_threshold_micro INTEGER CHECK (alert_threshold_micro IS NULL OR alert_threshold_micro >= 0);
