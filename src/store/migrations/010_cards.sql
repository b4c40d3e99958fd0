-- Card vault (docs/design.md "Secrets and the vault") and card authentication state.

-- One data key per project. It is never stored in clear: `wraps` maps a master key id to the
-- data key wrapped (AES-256-GCM) by that master key. Rotation adds a wrap under the new
-- master key before the old one is dropped, so nodes on either key keep working.
CREATE TABLE data_keys (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL UNIQUE REFERENCES projects(id),
  wraps jsonb NOT NULL,
  created timestamptz NOT NULL DEFAULT now(),
  modified timestamptz NOT NULL DEFAULT now()
);

-- A stored card; its id is the vault_token. Bound to the one transaction whose setup_token
-- stored it. Ciphertexts are base64 of iv | tag | AES-256-GCM ciphertext under the project's
-- data key, with the project, card and field as associated data.
CREATE TABLE vault_cards (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  transaction_id uuid NOT NULL REFERENCES transactions(id),
  data_key_id uuid NOT NULL REFERENCES data_keys(id),
  pan_ct text NOT NULL,
  name_ct text,
  -- keyed HMAC of the PAN under a key derived from the data key: the same card gives the
  -- same fingerprint within a project, and nothing outside the vault can recompute it
  fingerprint text NOT NULL,
  expiry text NOT NULL,
  truncated_pan text NOT NULL,
  brand text NOT NULL,
  brands text[] NOT NULL,
  -- encrypted CVC, only between authenticate and the authorization, then NULL
  cvc_ct text,
  created timestamptz NOT NULL
);
CREATE INDEX vault_cards_transaction ON vault_cards (project_id, transaction_id);
CREATE INDEX vault_cards_fingerprint ON vault_cards (project_id, fingerprint);

-- 3-D Secure of a card transaction, from authenticate until the authorization.
CREATE TABLE card_authentications (
  transaction_id uuid PRIMARY KEY REFERENCES transactions(id),
  project_id uuid NOT NULL REFERENCES projects(id),
  vault_token uuid NOT NULL REFERENCES vault_cards(id),
  -- transStatus: Y A N U R, or C while a challenge is open
  trans_status text NOT NULL,
  eci text,
  -- acquirer reference of an authorization whose answer comes later (late decline)
  acquirer_reference text,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL
);
CREATE INDEX card_authentications_project ON card_authentications (project_id);
