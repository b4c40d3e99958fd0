-- The EMV 3DS Method of a live card payment (docs/three-d-secure.md "The 3DS Method"): when the
-- card's range has a threeDSMethodURL, the lookup waits for Tender's 3-D Secure page to run the
-- method in a hidden iframe. The row holds what the lookup needs meanwhile: the AReq's
-- threeDSServerTransID (chosen now: the method data names it), the card, its CVC sealed (dropped
-- when the method finishes or the order ends) and the browser; notified_at is the ACS's
-- notification, finished_at the page's go-ahead (comp_ind Y or N, the AReq's threeDSCompInd).
CREATE TABLE IF NOT EXISTS threeds_methods (
  project_id uuid NOT NULL REFERENCES projects (id),
  transaction_id uuid NOT NULL,
  server_trans_id uuid NOT NULL,
  method_url text NOT NULL,
  vault_token uuid NOT NULL,
  cvc_ct text,
  shopper jsonb NOT NULL DEFAULT '{}',
  created timestamptz NOT NULL DEFAULT now(),
  notified_at timestamptz,
  finished_at timestamptz,
  comp_ind text,
  PRIMARY KEY (project_id, transaction_id)
);
CREATE INDEX IF NOT EXISTS threeds_methods_transaction ON threeds_methods (transaction_id);
