-- Velocity limits against card testing (docs/risk.md), counted in the database so that every
-- node enforces one count.

-- Attempts and declines per fixed window of a subject: a card (its fingerprint), a shopper's
-- address or network, an order, a customer, a project. Not tenant data: a card's platform counter
-- spans merchants, so there is no project_id. `bucket` is an HMAC under the platform's risk key
-- of the limit's subject (and its project): no card, address or email is stored, nor can it be
-- guessed back from a bucket without the key.
CREATE TABLE IF NOT EXISTS risk_counters (
  bucket text NOT NULL,
  window_start timestamptz NOT NULL,
  attempts integer NOT NULL,
  declines integer NOT NULL DEFAULT 0,
  PRIMARY KEY (bucket, window_start)
);
CREATE INDEX IF NOT EXISTS risk_counters_window ON risk_counters (window_start);

-- The counters one screened card attempt counted in, so its decline is added to them when the
-- order fails (services/risk/screen.ts countDeclines, an order status hook).
CREATE TABLE IF NOT EXISTS risk_checks (
  transaction_id uuid NOT NULL,
  project_id uuid NOT NULL REFERENCES projects (id),
  order_id uuid NOT NULL,
  buckets text[] NOT NULL,
  window_start timestamptz NOT NULL,
  counted boolean NOT NULL DEFAULT false,
  created timestamptz NOT NULL,
  PRIMARY KEY (transaction_id, project_id)
);
CREATE INDEX IF NOT EXISTS risk_checks_order ON risk_checks (order_id, project_id) WHERE NOT counted;
CREATE INDEX IF NOT EXISTS risk_checks_created ON risk_checks (created);

-- The decision on a screened card transaction, as its `risk` object shows it.
ALTER TABLE transactions ADD COLUMN IF NOT EXISTS risk jsonb;
