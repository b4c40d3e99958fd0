-- Rules a merchant writes (docs/risk.md "Rules a merchant writes"): an AND of conditions on the
-- payment and an action, tried in `position` order at every card screening. `conditions` is the
-- rule as validated by domain/risk/rules.ts (field, op, value): no card data.
CREATE TABLE IF NOT EXISTS risk_rules (
  id uuid NOT NULL,
  project_id uuid NOT NULL REFERENCES projects (id),
  position integer NOT NULL,
  name text NOT NULL,
  action text NOT NULL CHECK (action IN ('refuse', 'challenge', 'flag')),
  conditions jsonb NOT NULL,
  enabled boolean NOT NULL DEFAULT false,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL,
  PRIMARY KEY (id, project_id)
);
-- the screening reads a project's enabled rules in order
CREATE INDEX IF NOT EXISTS risk_rules_project ON risk_rules (project_id, position);

-- The platform hold (docs/risk.md "The platform hold"): a project whose decline ratio stayed far
-- above its own recent one is held (its card payments refused) until the operator lifts it.
CREATE TABLE IF NOT EXISTS risk_holds (
  id uuid NOT NULL,
  project_id uuid NOT NULL REFERENCES projects (id),
  -- what tripped it: counts and ratios, no card or address
  reason text NOT NULL,
  created timestamptz NOT NULL,
  lifted timestamptz,
  lifted_by text,
  PRIMARY KEY (id, project_id)
);
-- one hold in force per project
CREATE UNIQUE INDEX IF NOT EXISTS risk_holds_open ON risk_holds (project_id) WHERE lifted IS NULL;

-- The hold's check reads a project's authorizations of the last hour or so.
CREATE INDEX IF NOT EXISTS acquirer_attempts_authorizations ON acquirer_attempts (project_id, created) WHERE kind = 'authorization';
