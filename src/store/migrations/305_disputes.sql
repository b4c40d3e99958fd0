-- Disputes (docs/payouts.md "Disputes"): a chargeback the acquirer's settlement file reports (or
-- a test project's test chargeback), the stages that followed it, and the merchant's answer.
CREATE TABLE disputes (
  id uuid NOT NULL,
  project_id uuid NOT NULL,
  order_id uuid NOT NULL,
  -- the payment charged back
  transaction_id uuid NOT NULL,
  source text NOT NULL CHECK (source IN ('acquirer', 'test')),
  -- the host's dispute id (source acquirer): a line read again finds its dispute
  host_dispute_id text,
  reason_code text,
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  state text NOT NULL CHECK (state IN ('open', 'accepted', 'defended', 'won', 'lost')),
  -- the merchant answers (accepts or defends) before it
  deadline timestamptz NOT NULL,
  defence text,
  answered_by text,
  answered timestamptz,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL,
  PRIMARY KEY (id, project_id),
  FOREIGN KEY (transaction_id, project_id) REFERENCES transactions (id, project_id)
);
CREATE UNIQUE INDEX disputes_host_id ON disputes (host_dispute_id, project_id) WHERE host_dispute_id IS NOT NULL;
CREATE INDEX disputes_project ON disputes (project_id, created DESC, id);
CREATE INDEX disputes_open ON disputes (state, deadline) WHERE state IN ('open', 'defended');

-- Each stage once: the primary key is what makes a file imported twice, or by two nodes, change nothing.
CREATE TABLE dispute_stages (
  dispute_id uuid NOT NULL,
  project_id uuid NOT NULL,
  stage text NOT NULL CHECK (stage IN ('chargeback', 'second_presentment', 'pre_arbitration')),
  amount bigint NOT NULL,
  reason_code text,
  -- the settlement file's date (test chargebacks: the day it was made)
  file_date date NOT NULL,
  -- the chargeback or reversal order the stage made
  child_order_id uuid,
  created timestamptz NOT NULL,
  PRIMARY KEY (dispute_id, project_id, stage),
  FOREIGN KEY (dispute_id, project_id) REFERENCES disputes (id, project_id)
);

-- The merchant's evidence, kept in the database (every node sees it; size and type are limited
-- by domain/disputes.ts) until the operator takes it with `tender disputes evidence`.
CREATE TABLE dispute_evidence (
  id uuid NOT NULL,
  dispute_id uuid NOT NULL,
  project_id uuid NOT NULL,
  name text NOT NULL,
  content_type text NOT NULL,
  size integer NOT NULL CHECK (size > 0),
  content bytea NOT NULL,
  created timestamptz NOT NULL,
  PRIMARY KEY (id, project_id),
  FOREIGN KEY (dispute_id, project_id) REFERENCES disputes (id, project_id)
);
CREATE INDEX dispute_evidence_dispute ON dispute_evidence (dispute_id, project_id);

-- what a dispute line names: the settled message by terminal and RRN
CREATE INDEX acquirer_link_messages_rrn ON acquirer_link_messages (terminal_id, rrn);
