-- Payouts (docs/payouts.md): a schedule per merchant, the payouts a run makes, and the SEPA
-- files that carry them.
CREATE TABLE payout_schedules (
  merchant_id uuid PRIMARY KEY REFERENCES merchants(id),
  iban text NOT NULL,
  name text NOT NULL,
  -- daily, weekly:mon .. weekly:sun, monthly:1 .. monthly:31 (domain/payouts/schedule.ts)
  every text NOT NULL,
  -- in cents: an available balance below it waits for the next run
  minimum bigint NOT NULL DEFAULT 0 CHECK (minimum >= 0),
  time_zone text NOT NULL DEFAULT 'UTC',
  -- a changed IBAN holds the next payout until then
  held_until timestamptz,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL
);

-- One SEPA credit transfer initiation file: its ids are fixed when it is made, so writing it
-- again writes the same file.
CREATE TABLE payout_files (
  id uuid PRIMARY KEY,
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  msg_id text NOT NULL UNIQUE,
  pmt_inf_id text NOT NULL,
  execution date NOT NULL,
  debtor_name text NOT NULL,
  debtor_iban text NOT NULL,
  debtor_bic text,
  created timestamptz NOT NULL,
  -- set once the file is on disk
  written timestamptz
);

CREATE TABLE payouts (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  -- the schedule's local date the payout is for: one per merchant, mode, currency and period
  period text NOT NULL,
  state text NOT NULL CHECK (state IN ('scheduled', 'sent', 'booked', 'rejected', 'returned')),
  iban text NOT NULL,
  name text NOT NULL,
  end_to_end_id text NOT NULL UNIQUE,
  file_id uuid NOT NULL REFERENCES payout_files(id),
  return_reason text,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL,
  UNIQUE (merchant_id, mode, currency, period)
);
CREATE INDEX payouts_merchant ON payouts (merchant_id, created DESC, id);
CREATE INDEX payouts_file ON payouts (file_id);

-- A payout's journal moves money of the merchant's projects, of no order: its legs name the payout.
ALTER TABLE ledger_entries ALTER COLUMN order_id DROP NOT NULL;
ALTER TABLE ledger_entries ALTER COLUMN transaction_id DROP NOT NULL;
ALTER TABLE ledger_entries ALTER COLUMN payment_transaction_id DROP NOT NULL;
ALTER TABLE ledger_entries ADD COLUMN payout_id uuid REFERENCES payouts(id);
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_of_something CHECK (order_id IS NOT NULL OR payout_id IS NOT NULL);
CREATE INDEX ledger_payout ON ledger_entries (payout_id) WHERE payout_id IS NOT NULL;
