-- Webhooks (docs/design.md "Webhooks"): signing secrets, deliveries fanned out from the outbox, attempts.

-- The project's Standard Webhooks secret, sealed with the project's data key (services/crypto-envelope.ts).
-- During a rotation the previous secret still signs until previous_expires (project clock).
CREATE TABLE webhook_secrets (
  project_id uuid PRIMARY KEY REFERENCES projects(id),
  data_key_id uuid NOT NULL,
  secret_ct text NOT NULL,
  previous_ct text,
  previous_expires timestamptz,
  created timestamptz NOT NULL DEFAULT now(),
  rotated timestamptz
);

-- One message to one URL. Written in the same database transaction as the outbox row it comes
-- from (or by a resend). Deliveries of one order and URL go out in seq order: only the oldest
-- pending one of a chain is ever attempted. Times are in the project's clock.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  order_id uuid NOT NULL REFERENCES orders(id),
  outbox_id bigint REFERENCES outbox(id),
  seq bigserial NOT NULL,
  event text NOT NULL DEFAULT 'status_changed',
  -- the order status the change led to (for the log); null for a resend
  order_status text,
  -- why this URL: order, project, payment_link, extra; resend deliveries keep the target they resend to
  target text NOT NULL,
  resend boolean NOT NULL DEFAULT false,
  url text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts int NOT NULL DEFAULT 0,
  -- when the next attempt is due; while an attempt is under way, when it may be taken over
  next_attempt_at timestamptz,
  last_response_status int,
  last_error text,
  created timestamptz NOT NULL,
  completed timestamptz
);
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (project_id, order_id, seq);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (order_id, url, seq) WHERE status = 'pending';
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (outbox_id, url) WHERE outbox_id IS NOT NULL;

-- Every attempt, for the delivery log (GET /v1/orders/{id}/webhooks/).
CREATE TABLE webhook_attempts (
  id bigserial PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id),
  attempt int NOT NULL,
  attempted timestamptz NOT NULL,
  url text NOT NULL,
  response_status int,
  error text,
  duration_ms int NOT NULL,
  next_retry timestamptz
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
