-- Cardholder names are sealed like PANs (issue 22). Names stored in clear before leave the
-- transactions' details here; the service, which holds the master key, seals them back at its
-- next start (services/holder-names.ts) and deletes each row of this table as it goes.
CREATE TABLE holder_names_to_seal (
  transaction_id uuid PRIMARY KEY,
  project_id uuid NOT NULL,
  name text NOT NULL
);
INSERT INTO holder_names_to_seal (transaction_id, project_id, name)
  SELECT id, project_id, details->>'cardholder_name' FROM transactions WHERE details->>'cardholder_name' IS NOT NULL;
UPDATE transactions SET details = details - 'cardholder_name' WHERE details ? 'cardholder_name';
