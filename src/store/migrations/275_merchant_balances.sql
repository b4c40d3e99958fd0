-- Merchant balances (docs/payouts.md): settlement moves what Tender owes a merchant from pending
-- (merchant_payable) to available (merchant_available), part of it held in a rolling reserve
-- (merchant_reserved); only a payout takes it out of what Tender owes.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_check CHECK (account IN (
  'holds', 'holds_contra', 'acquirer_receivable', 'merchant_payable', 'merchant_available', 'merchant_reserved', 'fee_income', 'bank'));
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check CHECK (kind IN (
  'hold', 'sale', 'capture', 'void', 'expiry', 'refund', 'chargeback', 'reversal', 'fee', 'settlement',
  'reserve', 'reserve_release', 'payout', 'payout_return'));

-- Balances are read per project and account; reserves are released by the transaction they held back.
CREATE INDEX ledger_balances ON ledger_entries (project_id, account, currency) INCLUDE (amount) WHERE account IN ('merchant_payable', 'merchant_available', 'merchant_reserved');
CREATE INDEX ledger_reserves ON ledger_entries (project_id, transaction_id) WHERE account = 'merchant_reserved';

-- Settlement journals written before treated the merchant as paid: merchant_payable was cleared
-- and only the fee stayed in the bank, though nothing paid anyone. Each gets a journal that makes
-- it what settlement books now: the money is in the bank, and the merchant's share is available.
WITH old AS MATERIALIZED (
  SELECT project_id, order_id, transaction_id, payment_transaction_id, currency, amount, created, gen_random_uuid() AS journal_id
  FROM ledger_entries WHERE kind = 'settlement' AND account = 'merchant_payable'
)
INSERT INTO ledger_entries (project_id, journal_id, order_id, transaction_id, payment_transaction_id, account, currency, amount, kind, created)
SELECT o.project_id, o.journal_id, o.order_id, o.transaction_id, o.payment_transaction_id, l.account, o.currency, l.amount, 'settlement', o.created
FROM old o CROSS JOIN LATERAL (VALUES ('bank', o.amount), ('merchant_available', -o.amount)) AS l(account, amount);
-- check these journals now, so later migrations in the same transaction may alter the table
SET CONSTRAINTS ledger_balanced IMMEDIATE;
SET CONSTRAINTS ledger_balanced DEFERRED;
