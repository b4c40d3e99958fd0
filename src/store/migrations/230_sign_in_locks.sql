-- Sign-in throttling that holds under concurrency (docs/security.md "Portal sign-in"): every
-- attempt is counted by one atomic upsert before the password or code is checked, and each
-- lock of a scope doubles the next one (`locks`), up to PORTAL_SIGNIN_MAX_LOCK_SECONDS.
-- Scopes: 'account:<email>', 'address:<ip>' and 'code:<user id>' (second-factor codes).
ALTER TABLE portal_sign_in_failures ADD COLUMN IF NOT EXISTS locks integer NOT NULL DEFAULT 0;
