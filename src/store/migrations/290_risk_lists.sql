-- Blocklists and allowlists (docs/risk.md "Lists"): a project's, and the platform's. Every kind is
-- stored as a range [lo, hi] of fixed-width text compared byte-wise, so one index on (kind, lo)
-- per table finds a payment's entries of every kind in one statement (store/risk/lists.ts). A card
-- is its fingerprint (an HMAC under the platform's risk key), never its number.
CREATE TABLE IF NOT EXISTS risk_lists (
  project_id uuid NOT NULL REFERENCES projects (id),
  id uuid NOT NULL,
  list text NOT NULL CHECK (list IN ('block', 'allow')),
  kind text NOT NULL,
  value text NOT NULL,
  lo text COLLATE "C" NOT NULL,
  hi text COLLATE "C" NOT NULL,
  created timestamptz NOT NULL DEFAULT now(),
  created_by text,
  PRIMARY KEY (project_id, id),
  UNIQUE (project_id, kind, lo, hi, list)
);

-- The platform's lists: for every merchant, kept by the operator (the CLI's --platform).
CREATE TABLE IF NOT EXISTS platform_risk_lists (
  id uuid PRIMARY KEY,
  list text NOT NULL CHECK (list IN ('block', 'allow')),
  kind text NOT NULL,
  value text NOT NULL,
  lo text COLLATE "C" NOT NULL,
  hi text COLLATE "C" NOT NULL,
  created timestamptz NOT NULL DEFAULT now(),
  created_by text,
  UNIQUE (kind, lo, hi, list)
);

-- What the operator changed on the platform (a merchant's changes are in its portal_audit).
CREATE TABLE IF NOT EXISTS platform_audit (
  id uuid PRIMARY KEY,
  actor text NOT NULL,
  action text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}',
  created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS platform_audit_created ON platform_audit (created DESC, id);
