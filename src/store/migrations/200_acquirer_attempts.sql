-- Every call to an acquirer is first an attempt (docs/money.md "Acquirer attempts"): recorded and
-- committed before the call, so that an answer lost on the network, a timeout or a crash between
-- the call and its outcome leaves a row saying money may have moved. Its id is the operation id
-- the connector receives; idempotency_key is derived from it. `amount` is reserved while the
-- attempt is in flight (processing, unknown): a capture, void or refund beyond what is left after
-- the reservations is refused before any call. Never card data: only ids, amounts and answers.
CREATE TABLE acquirer_attempts (
  id uuid NOT NULL,
  project_id uuid NOT NULL,
  -- the payment transaction the operation is about (an authorization's own; a capture's original)
  transaction_id uuid NOT NULL,
  order_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('three_ds', 'authorization', 'capture', 'void', 'refund', 'inquiry', 'reversal')),
  amount bigint NOT NULL CHECK (amount >= 0),
  currency text NOT NULL,
  -- processing: recorded, the call under way or answered "later"; unknown: the call ended without
  -- an answer; succeeded / failed: final; reversed: an authorization undone after its answer was lost
  status text NOT NULL CHECK (status IN ('processing', 'unknown', 'succeeded', 'failed', 'reversed')),
  idempotency_key text NOT NULL,
  -- the original authorization's acquirer reference (follow-ups), and this operation's own
  authorization_reference text,
  reference text,
  response_code text,
  response_description text,
  -- why there is no answer (timeout, connection reset), for the log and the merchant's support
  error text,
  -- what applying the outcome needs besides the amount (a refund's description and order lines, the source)
  request jsonb NOT NULL DEFAULT '{}',
  -- the order that records the movement (a capture, void or refund order), once there is one
  result_order_id uuid,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL,
  settled timestamptz,
  PRIMARY KEY (id, project_id),
  FOREIGN KEY (transaction_id, project_id) REFERENCES transactions (id, project_id)
);
-- the reservations of a payment, and the attempts recovery looks for: only those in flight
CREATE INDEX acquirer_attempts_in_flight ON acquirer_attempts (transaction_id) WHERE status IN ('processing', 'unknown');
-- one authorization in flight per transaction: a second visit of the 3-D Secure page finds it
CREATE UNIQUE INDEX acquirer_attempts_one_authorization ON acquirer_attempts (transaction_id, project_id)
  WHERE kind = 'authorization' AND status IN ('processing', 'unknown');
