-- The merchant portal: its users, their sessions, sign-in throttling, one-time action tokens and
-- the audit log; and when each API key was last used. Self-contained: touches no other migration.

ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last_used timestamptz;

CREATE TABLE portal_users (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  -- lower-cased
  email text NOT NULL UNIQUE,
  -- scrypt$N$r$p$salt$key (base64url): never the password
  password_hash text NOT NULL,
  -- TOTP secret sealed under a key derived from the master key; pending until its first code is entered
  totp_secret_ct text,
  totp_pending_ct text,
  -- the last time step a code was accepted for: a code works once
  totp_last_counter bigint NOT NULL DEFAULT -1,
  created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_users_merchant ON portal_users (merchant_id);

CREATE TABLE portal_sessions (
  -- sha256 of the cookie value: a database reader cannot sign in
  token_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES portal_users(id) ON DELETE CASCADE,
  -- false while a user with TOTP has given the password but not yet the code
  verified boolean NOT NULL,
  created timestamptz NOT NULL,
  last_seen timestamptz NOT NULL
);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);

-- Failed sign-ins per scope: 'account:<email>' and 'address:<ip>'.
CREATE TABLE portal_sign_in_failures (
  scope text PRIMARY KEY,
  failures integer NOT NULL,
  first_failure timestamptz NOT NULL,
  locked_until timestamptz
);

-- A confirmed action (refund, capture...) runs once per token, whatever the browser resends.
CREATE TABLE portal_actions (
  token text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES portal_users(id) ON DELETE CASCADE,
  -- where the finished action led (the page that shows its result); NULL while it runs
  result text,
  created timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE portal_audit (
  id uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  user_id uuid,
  email text,
  project_id uuid,
  action text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}',
  address text,
  created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_audit_merchant ON portal_audit (merchant_id, created DESC, id);
