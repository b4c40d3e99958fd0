-- Payment links. Status is derived from the link's orders and expires_at (src/domain/link-status.ts);
-- modified and completed are kept here by the order status hook and the expire_payment_link job.
CREATE TABLE payment_links (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  merchant_id uuid NOT NULL,
  merchant_order_id text NOT NULL,
  description text,
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount >= 0),
  -- null: every method active in the project
  payment_methods text[],
  expiration_period text NOT NULL,
  expires_at timestamptz NOT NULL,
  return_url text,
  webhook_url text,
  flags text[] NOT NULL DEFAULT '{}',
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL,
  -- when the link reached completed or expired
  completed timestamptz
);
CREATE INDEX payment_links_project_created ON payment_links (project_id, created, id);

-- The orders of a link, for its status and for related_payment_link_id searches.
CREATE INDEX IF NOT EXISTS orders_payment_link ON orders (project_id, payment_link_id) WHERE payment_link_id IS NOT NULL;
