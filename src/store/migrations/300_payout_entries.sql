-- A payout's statement (docs/payouts.md, "Statements"): which ledger entries of the merchant's
-- available balance each payout took. The ledger stays append-only; this table links each entry
-- of `merchant_available` to the one payout that paid it (the primary key: never two), and a
-- payout's own legs to itself. What no payout took yet is the available balance.
CREATE TABLE payout_entries (
  project_id uuid NOT NULL REFERENCES projects(id),
  entry_id bigint NOT NULL,
  payout_id uuid NOT NULL REFERENCES payouts(id),
  PRIMARY KEY (project_id, entry_id),
  FOREIGN KEY (entry_id, project_id) REFERENCES ledger_entries (id, project_id)
);
CREATE INDEX payout_entries_payout ON payout_entries (payout_id);
-- The entries of a project not yet paid out are found from the ledger's side.
CREATE INDEX ledger_available ON ledger_entries (project_id, currency, id) WHERE account = 'merchant_available';

-- Payouts made before this migration took the whole available balance of their merchant's
-- projects of the mode at the time: each entry goes to the first payout whose own legs were
-- written after it (ledger ids grow as rows are written; a project's clock may run ahead of the
-- wall clock, so times would not do), and a payout's own legs to itself. Runs from now on link
-- exactly what they take.
INSERT INTO payout_entries (project_id, entry_id, payout_id)
SELECT e.project_id, e.id, e.payout_id FROM ledger_entries e
WHERE e.account = 'merchant_available' AND e.kind = 'payout';
WITH legs AS MATERIALIZED (
  SELECT e.payout_id, min(e.id) AS leg_id, p.merchant_id, p.mode, p.currency
  FROM ledger_entries e JOIN payouts p ON p.id = e.payout_id
  WHERE e.account = 'merchant_available' AND e.kind = 'payout'
  GROUP BY e.payout_id, p.merchant_id, p.mode, p.currency
)
INSERT INTO payout_entries (project_id, entry_id, payout_id)
SELECT e.project_id, e.id, first.payout_id
FROM ledger_entries e
JOIN projects pr ON pr.id = e.project_id
CROSS JOIN LATERAL (
  SELECT l.payout_id FROM legs l
  WHERE l.merchant_id = pr.merchant_id AND l.mode = pr.mode AND l.currency = e.currency AND l.leg_id > e.id
  ORDER BY l.leg_id LIMIT 1
) first
WHERE e.account = 'merchant_available' AND e.kind <> 'payout';
