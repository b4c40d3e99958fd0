-- Money: the double-entry ledger, and when an authorization was given and must be captured by.

-- One row per leg of a journal. amount is signed: positive debits the account, negative
-- credits it. The legs of one journal sum to zero per currency (checked at commit below).
CREATE TABLE ledger_entries (
  id bigserial PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  journal_id uuid NOT NULL,
  -- the order and transaction whose money moved (a capture order's, a refund order's, ...)
  order_id uuid NOT NULL REFERENCES orders(id),
  transaction_id uuid NOT NULL REFERENCES transactions(id),
  -- the original payment transaction the movement belongs to (itself for holds and sales)
  payment_transaction_id uuid NOT NULL REFERENCES transactions(id),
  account text NOT NULL CHECK (account IN ('holds', 'holds_contra', 'acquirer_receivable', 'merchant_payable', 'fee_income', 'bank')),
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount <> 0),
  kind text NOT NULL CHECK (kind IN ('hold', 'sale', 'capture', 'void', 'expiry', 'refund', 'chargeback', 'reversal', 'fee', 'settlement')),
  created timestamptz NOT NULL
);
CREATE INDEX ledger_journal ON ledger_entries (project_id, journal_id);
CREATE INDEX ledger_payment ON ledger_entries (project_id, payment_transaction_id);

-- Last line of defence: a journal that does not balance never commits.
CREATE FUNCTION ledger_journal_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM ledger_entries WHERE journal_id = NEW.journal_id GROUP BY currency HAVING sum(amount) <> 0) THEN
    RAISE EXCEPTION 'ledger journal % does not balance', NEW.journal_id USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_journal_balanced();

-- In the project's clock: when the authorization was given, and when a pre-authorization
-- is captured automatically (delayed) or lapses (manual).
ALTER TABLE transactions ADD COLUMN authorized timestamptz;
ALTER TABLE transactions ADD COLUMN capture_before timestamptz;
ALTER TABLE transactions ADD CHECK (authorized_amount >= 0 AND captured_amount >= 0 AND voided_amount >= 0 AND refunded_amount >= 0 AND charged_back_amount >= 0);

-- What the daily settlement and the settle endpoint pick up.
CREATE INDEX transactions_unsettled ON transactions (project_id, created) WHERE settled IS NULL AND settlement_amount IS NOT NULL;
