-- wallet-a-pay payment tokens (docs/wallets.md "wallet-a-pay payments").

-- Keys of a project, private halves sealed by the project's data key (crypto-envelope.ts).
--   processing:     the key tokens are encrypted to; public_key_hash is how a token names it
--                   (base64 SHA-256 of its SubjectPublicKeyInfo), public_pem its public half
--   sandbox_signer: a test project's sandbox signing certificate; public_pem holds the chain
--                   (leaf, intermediate, root), whose root the project's test tokens trust
CREATE TABLE wallet_a_keys (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  kind text NOT NULL CHECK (kind IN ('processing', 'sandbox_signer')),
  data_key_id uuid NOT NULL REFERENCES data_keys(id),
  private_key_ct text NOT NULL,
  public_key_hash text,
  public_pem text NOT NULL,
  created timestamptz NOT NULL,
  retired timestamptz,
  CHECK (kind <> 'processing' OR public_key_hash IS NOT NULL)
);
-- one active key of each kind per project, also when two nodes race to create it
CREATE UNIQUE INDEX wallet_a_keys_active ON wallet_a_keys (project_id, kind) WHERE retired IS NULL;

-- A card vaulted from a wallet-a-pay token; token_id (the token's header.transactionId)
-- makes a token pay once.
CREATE TABLE wallet_a_tokens (
  vault_token uuid PRIMARY KEY REFERENCES vault_cards(id),
  project_id uuid NOT NULL REFERENCES projects(id),
  transaction_id uuid NOT NULL REFERENCES transactions(id),
  token_id text NOT NULL,
  created timestamptz NOT NULL
);
CREATE UNIQUE INDEX wallet_a_tokens_token ON wallet_a_tokens (project_id, token_id);
