-- Wallets (docs/design.md "Wallets", docs/wallets.md).

-- wallet-b-pay keys of a project. Private keys are stored only sealed by the project's data
-- key (crypto-envelope.ts, the vault's envelope), so master key rotation covers them too.
--   recipient:    the key pair tokens are encrypted to; recipient_id is the id it answers to
--                 (signed into every token).
--   sandbox_root: the root signing key of a test project's sandbox wallet sheet; its public
--                 half joins the project's test root key set.
CREATE TABLE wallet_b_keys (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  kind text NOT NULL CHECK (kind IN ('recipient', 'sandbox_root')),
  recipient_id text,
  data_key_id uuid NOT NULL REFERENCES data_keys(id),
  private_key_ct text NOT NULL,
  -- recipient: uncompressed point (base64), as wallet-b-pay's DIRECT tokenization takes it;
  -- sandbox_root: SubjectPublicKeyInfo (base64), as root key lists hold them
  public_key text NOT NULL,
  created timestamptz NOT NULL,
  retired timestamptz,
  CHECK (kind <> 'recipient' OR recipient_id IS NOT NULL)
);
CREATE INDEX wallet_b_keys_project ON wallet_b_keys (project_id, kind, created);
-- one active key of each kind per project, also when two nodes race to create it (a new
-- key retires the old one in the same database transaction)
CREATE UNIQUE INDEX wallet_b_keys_active ON wallet_b_keys (project_id, kind) WHERE retired IS NULL;

-- A card the token service vaulted from a wallet-b-pay token: how it was authenticated, so
-- the pay step can check the cryptogram the merchant sends back (as the scheme would), and
-- the token's messageId, so one token pays once.
CREATE TABLE wallet_b_tokens (
  vault_token uuid PRIMARY KEY REFERENCES vault_cards(id),
  project_id uuid NOT NULL REFERENCES projects(id),
  transaction_id uuid NOT NULL REFERENCES transactions(id),
  auth_method text NOT NULL CHECK (auth_method IN ('PAN_ONLY', 'CRYPTOGRAM_3DS')),
  -- HMAC of the cryptogram under the project's data key; null for PAN_ONLY
  cryptogram_mac text,
  message_id text,
  created timestamptz NOT NULL
);
CREATE UNIQUE INDEX wallet_b_tokens_message ON wallet_b_tokens (project_id, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX wallet_b_tokens_transaction ON wallet_b_tokens (project_id, transaction_id);

-- wallet-a-pay merchant identity of a project: the certificate (public) and its private key,
-- sealed by the project's data key, presented over mutual TLS to the wallet provider.
CREATE TABLE wallet_a_identities (
  project_id uuid PRIMARY KEY REFERENCES projects(id),
  data_key_id uuid NOT NULL REFERENCES data_keys(id),
  certificate text NOT NULL,
  private_key_ct text NOT NULL,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL
);
