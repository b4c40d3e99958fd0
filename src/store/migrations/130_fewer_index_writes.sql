-- Two indexes that every payment wrote and no lookup needed (docs/performance-cards.md):
-- 1. The ledger's balance trigger looked journals up by journal_id alone, so migration 040 gave
--    it an index of its own beside ledger_journal (project_id, journal_id). It now names the
--    project as well and walks ledger_journal: one index fewer for the four rows of every sale.
-- 2. card_authentications_project (project_id): no statement looks 3-D Secure rows up by
--    project alone; they are found by transaction (the primary key).
CREATE OR REPLACE FUNCTION ledger_journal_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM ledger_entries WHERE project_id = NEW.project_id AND journal_id = NEW.journal_id GROUP BY currency HAVING sum(amount) <> 0) THEN
    RAISE EXCEPTION 'ledger journal % does not balance', NEW.journal_id USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
DROP INDEX IF EXISTS ledger_entries_journal_id;
DROP INDEX IF EXISTS card_authentications_project;
