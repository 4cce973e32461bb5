-- Payments (issue 16, docs/billing.md "Payments"): an order is written before the customer is sent to
-- the provider, and credited at most once (a conditional UPDATE to 'paid' in the same transaction as
-- its TOPUP ledger entry, whose ref_id is the order id: migration 011's unique index backs it up).
CREATE TABLE orders (
  id             TEXT PRIMARY KEY,                 -- ord_...
  account_id     TEXT NOT NULL REFERENCES accounts(id),
  person_id      TEXT,                             -- the console person who started it
  provider       TEXT NOT NULL CHECK (provider IN ('stripe', 'yookassa')),
  currency       TEXT NOT NULL CHECK (currency IN ('USD', 'RUB')),
  amount_micro   INTEGER NOT NULL CHECK (amount_micro > 0 AND amount_micro % 10000 = 0),
  status         TEXT NOT NULL CHECK (status IN ('created', 'pending', 'paid', 'failed', 'expired', 'canceled')),
  provider_ref   TEXT,                             -- Stripe Checkout Session id / YooKassa payment id
  checkout_url   TEXT,
  failure        TEXT,
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  paid_at        INTEGER,
  refunded_micro INTEGER NOT NULL DEFAULT 0 CHECK (refunded_micro >= 0 AND refunded_micro <= amount_micro),
  CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
  CHECK (refunded_micro = 0 OR status = 'paid'),
  CHECK (provider <> 'stripe' OR currency = 'USD'),
  CHECK (provider <> 'yookassa' OR currency = 'RUB')
) STRICT;
CREATE UNIQUE INDEX orders_provider_ref ON orders(provider, provider_ref) WHERE provider_ref IS NOT NULL;
CREATE INDEX orders_account ON orders(account_id, id);
CREATE INDEX orders_status ON orders(status, id);
CREATE INDEX orders_open ON orders(expires_at) WHERE status IN ('created', 'pending');

-- Every notification a provider (or anyone) sent, with what was done about it.
CREATE TABLE payment_notifications (
  id          INTEGER PRIMARY KEY,
  provider    TEXT NOT NULL CHECK (provider IN ('stripe', 'yookassa')),
  order_id    TEXT REFERENCES orders(id),
  event_id    TEXT,
  event_type  TEXT,
  outcome     TEXT NOT NULL CHECK (outcome IN ('credited', 'credited_late', 'duplicate', 'forged', 'expired',
                'mismatch', 'unknown_order', 'not_paid', 'closed', 'ignored', 'verify_failed')),
  detail      TEXT,
  received_at INTEGER NOT NULL
) STRICT;
CREATE INDEX payment_notifications_order ON payment_notifications(order_id, id) WHERE order_id IS NOT NULL;
CREATE INDEX payment_notifications_outcome ON payment_notifications(outcome, id);
-- Notifications naming no order of ours (forged, strangers') are kept 30 days (the expiry sweep).
CREATE INDEX payment_notifications_unlinked ON payment_notifications(received_at) WHERE order_id IS NULL;
