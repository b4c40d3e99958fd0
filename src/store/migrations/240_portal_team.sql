-- The merchant portal's team: a role per user, one-time invitations, and the owners' rule that
-- everyone signs in with a second factor. Existing users keep every power they had: owner.

ALTER TABLE portal_users ADD COLUMN role text NOT NULL DEFAULT 'owner' CHECK (role IN ('owner', 'developer', 'support', 'viewer'));

CREATE TABLE portal_invites (
  -- sha256 of the link's token: a database reader cannot accept an invitation
  token_hash text PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  -- lower-cased; the account the invitation makes
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'developer', 'support', 'viewer')),
  created_by uuid,
  created timestamptz NOT NULL DEFAULT now(),
  expires timestamptz NOT NULL,
  -- set when accepted: the link works once
  used timestamptz
);
CREATE INDEX portal_invites_merchant ON portal_invites (merchant_id, created DESC);

ALTER TABLE merchants ADD COLUMN portal_require_totp boolean NOT NULL DEFAULT false;
