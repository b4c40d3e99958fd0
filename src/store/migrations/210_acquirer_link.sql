-- The ISO 8583 link to an acquiring host (docs/acquirer-iso8583.md).

-- The last STAN given out per terminal and UTC day. Every node sharing a host takes its STANs
-- from this one row (an atomic upsert), so STANs and the RRNs built from them never collide
-- between nodes and survive restarts. Not per project: several projects may share a terminal.
CREATE TABLE acquirer_link_stans (
  terminal_id text NOT NULL,
  day date NOT NULL,
  last integer NOT NULL CHECK (last BETWEEN 1 AND 999999),
  PRIMARY KEY (terminal_id, day)
);

-- Every financial message sent on the link, written before it goes out and completed by its
-- answer: what makes an operation id idempotent (the same id is the same message, resent), what
-- a reversal names (field 90), and Tender's side of `tender reconcile`.
CREATE TABLE acquirer_link_messages (
  operation_id text NOT NULL,
  project_id uuid NOT NULL REFERENCES projects(id),
  transaction_id uuid NOT NULL,
  acquirer text NOT NULL,
  terminal_id text NOT NULL,
  day date NOT NULL,
  stan text NOT NULL,
  rrn text NOT NULL,
  mti text NOT NULL,
  -- field 7 of the request, MMDDhhmmss
  transmission text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('preauth', 'sale', 'completion', 'refund', 'reversal')),
  amount bigint NOT NULL CHECK (amount >= 0),
  currency text NOT NULL,
  -- completions, refunds and reversals: the message they name
  original_rrn text,
  original_kind text,
  -- field 90 as sent, so an unanswered message can be sent again as it was
  original_data text,
  response_code text,
  authorization_code text,
  answered timestamptz,
  created timestamptz NOT NULL,
  PRIMARY KEY (operation_id, project_id)
);
CREATE INDEX acquirer_link_messages_day ON acquirer_link_messages (day, terminal_id, project_id);
