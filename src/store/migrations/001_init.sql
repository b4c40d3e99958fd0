-- Core schema. Every table but merchants carries project_id (projects.id is its own).

CREATE TABLE merchants (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  name text NOT NULL,
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  webhook_url text,
  -- payment methods with currencies, fee schedule, default expiration, capture window...
  settings jsonb NOT NULL DEFAULT '{}',
  -- test projects' own clock: milliseconds ahead of the wall clock, never negative
  clock_offset_ms bigint NOT NULL DEFAULT 0 CHECK (clock_offset_ms >= 0),
  created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_merchant ON projects (merchant_id);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  key_hash text NOT NULL UNIQUE,
  hint text NOT NULL,
  created timestamptz NOT NULL DEFAULT now(),
  revoked timestamptz
);
CREATE INDEX api_keys_project ON api_keys (project_id);

CREATE TABLE orders (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  merchant_id uuid NOT NULL,
  kind text NOT NULL DEFAULT 'payment' CHECK (kind IN ('payment', 'capture', 'void', 'refund', 'chargeback', 'reversal')),
  status text NOT NULL,
  merchant_order_id text,
  description text,
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount >= 0),
  flags text[] NOT NULL DEFAULT '{}',
  customer_email text,
  merchant_customer_id text,
  related_order_id uuid,
  payment_link_id uuid,
  refunded_amount bigint NOT NULL DEFAULT 0,
  -- the rest of the merchant's fields as sent (urls, customer, client, extra, ...)
  body jsonb NOT NULL DEFAULT '{}',
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL,
  completed timestamptz
);
CREATE INDEX orders_project_created ON orders (project_id, created, id);
CREATE INDEX orders_related ON orders (project_id, related_order_id) WHERE related_order_id IS NOT NULL;

CREATE TABLE transactions (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  order_id uuid NOT NULL REFERENCES orders(id),
  status text NOT NULL,
  payment_method text,
  payment_method_brand text,
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount >= 0),
  credit_debit text NOT NULL CHECK (credit_debit IN ('credit', 'debit')),
  capture_mode text CHECK (capture_mode IN ('manual', 'delayed')),
  transaction_type text,
  expiration_period text NOT NULL,
  expires_at timestamptz,
  is_capturable boolean NOT NULL DEFAULT false,
  -- money counters on an authorization, in minor units
  authorized_amount bigint NOT NULL DEFAULT 0,
  captured_amount bigint NOT NULL DEFAULT 0,
  voided_amount bigint NOT NULL DEFAULT 0,
  refunded_amount bigint NOT NULL DEFAULT 0,
  charged_back_amount bigint NOT NULL DEFAULT 0,
  reason text,
  -- capture_of / void_of / refund_of / chargeback_of / reversal_of the transaction named
  of_transaction_id uuid,
  setup_token uuid,
  setup_token_used timestamptz,
  details jsonb NOT NULL DEFAULT '{}',
  outcomes jsonb,
  fee_currency text,
  fee_amount bigint,
  settlement_currency text,
  settlement_amount bigint,
  settled timestamptz,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL,
  -- last line of defence for exact money; services check first and lock the row
  CHECK (captured_amount + voided_amount <= authorized_amount),
  CHECK (refunded_amount + charged_back_amount <= captured_amount)
);
CREATE INDEX transactions_order ON transactions (order_id);
CREATE UNIQUE INDEX transactions_setup_token ON transactions (setup_token) WHERE setup_token IS NOT NULL;

CREATE TABLE events (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  transaction_id uuid NOT NULL REFERENCES transactions(id),
  event text NOT NULL,
  source text NOT NULL,
  occurred timestamptz NOT NULL,
  noticed timestamptz NOT NULL,
  seq bigserial
);
CREATE INDEX events_transaction ON events (transaction_id, seq);

-- Every order status change, written with the change; webhooks deliver from here.
CREATE TABLE outbox (
  id bigserial PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  order_id uuid NOT NULL REFERENCES orders(id),
  event text NOT NULL DEFAULT 'status_changed',
  status text NOT NULL,
  created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_order ON outbox (order_id, id);

-- Due work, claimed with FOR UPDATE SKIP LOCKED. run_at is in the project's clock.
CREATE TABLE jobs (
  id bigserial PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  kind text NOT NULL,
  ref_id text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  run_at timestamptz NOT NULL,
  attempts int NOT NULL DEFAULT 0,
  locked_until timestamptz,
  last_error text,
  created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_due ON jobs (run_at);
CREATE INDEX jobs_project_due ON jobs (project_id, run_at);
CREATE UNIQUE INDEX jobs_once ON jobs (kind, ref_id);

CREATE TABLE idempotency_keys (
  project_id uuid NOT NULL REFERENCES projects(id),
  key text NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  request_hash text NOT NULL,
  response_status int,
  response_headers jsonb,
  response_body text,
  created timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_created ON idempotency_keys (created);
