-- An attempt in flight carries when recovery asks about it (docs/money.md "Recovery"), instead of
-- a job row written at its record and deleted at its apply: the worker's sweep turns the attempts
-- whose time has come into `acquirer_recovery` jobs. NULL: never swept (a reversal, driven by its
-- authorization's recovery). Times are in the project's clock, as a job's run_at.
ALTER TABLE acquirer_attempts ADD COLUMN recover_at timestamptz;
CREATE INDEX acquirer_attempts_recover_due ON acquirer_attempts (recover_at)
  WHERE status IN ('processing', 'unknown') AND recover_at IS NOT NULL;
-- attempts recorded before: their jobs stay and run as before; the sweep finds them as well
UPDATE acquirer_attempts a SET recover_at = j.run_at
  FROM jobs j
 WHERE j.kind = 'acquirer_recovery' AND j.ref_id = a.id::text AND j.project_id = a.project_id
   AND a.status IN ('processing', 'unknown');
