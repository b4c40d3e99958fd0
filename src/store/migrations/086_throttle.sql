-- Rate limits shared by every node (docs/security.md "Throttling").

-- Hits per fixed window of a limit and its subject (a client address, an order, a transaction).
-- Not tenant data: a subject such as a client address spans projects, so there is no project_id.
-- `bucket` is a SHA-256 of the limit's name and subject: no client address is stored in clear.
CREATE TABLE IF NOT EXISTS throttle_hits (
  bucket text NOT NULL,
  window_start timestamptz NOT NULL,
  hits integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
CREATE INDEX IF NOT EXISTS throttle_hits_window ON throttle_hits (window_start);

-- Card payments started from the hosted pages, for card-testing protection: declines are
-- counted per client (a SHA-256 of its address) and per payment link within a window.
CREATE TABLE IF NOT EXISTS card_attempts (
  transaction_id uuid PRIMARY KEY,
  project_id uuid NOT NULL,
  payment_link_id uuid,
  client text NOT NULL,
  created timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS card_attempts_client ON card_attempts (client, created);
CREATE INDEX IF NOT EXISTS card_attempts_link ON card_attempts (payment_link_id, created) WHERE payment_link_id IS NOT NULL;
