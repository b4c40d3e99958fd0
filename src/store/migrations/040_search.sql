-- Search and CSV reports (POST /v1/search/orders/, src/domain/query.ts): an index for every
-- field and sort of the query language, always led by project_id (every query filters by it).

-- Sorts: (project_id, sort expression, id) is exactly ORDER BY <sort>, o.id, so a page and a
-- search_after step are one index range scan, in either direction. The expressions must stay
-- identical to SORTS in src/domain/query.ts. created: orders_project_created (001); id: the
-- primary key. These also serve ranges on amount, created and modified.
CREATE INDEX orders_project_modified ON orders (project_id, modified, id);
CREATE INDEX orders_project_completed ON orders (project_id, (COALESCE(completed, '-infinity'::timestamptz)), id);
CREATE INDEX orders_project_amount ON orders (project_id, amount, id);
CREATE INDEX orders_project_merchant_order_sort ON orders (project_id, (COALESCE(merchant_order_id, '')), id);

-- Ranges on completed: the sort index above holds COALESCE(completed, ...), which a condition
-- on completed itself can not use.
CREATE INDEX orders_project_completed_at ON orders (project_id, completed) WHERE completed IS NOT NULL;

-- The commonest filter, by status, kept in created order for its date ranges and pages.
CREATE INDEX orders_project_status_created ON orders (project_id, status, created, id);

-- Exact and trailing-* lookups. text_pattern_ops serves both = and LIKE 'prefix%' whatever the
-- database collation (a plain index serves LIKE only under the C collation).
CREATE INDEX orders_merchant_order_id ON orders (project_id, merchant_order_id text_pattern_ops);
CREATE INDEX orders_customer_email ON orders (project_id, lower(customer_email) text_pattern_ops);
CREATE INDEX orders_merchant_customer_id ON orders (project_id, merchant_customer_id text_pattern_ops);
-- NOT customer.email_address:* (orders without an e-mail), in created order
CREATE INDEX orders_without_email ON orders (project_id, created, id) WHERE customer_email IS NULL;
-- related_payment_link_id (050_links creates the same index IF NOT EXISTS)
CREATE INDEX IF NOT EXISTS orders_payment_link ON orders (project_id, payment_link_id) WHERE payment_link_id IS NOT NULL;

-- transactions.* terms are EXISTS (...) semi-joins. Walking orders in sort order they probe
-- transactions_order (001); for a rare value the planner starts from these instead.
-- (INCLUDE payment_method_brand: without the column itself PostgreSQL never reads an expression
-- index alone, and counting a brand would visit every matching row of the table)
CREATE INDEX transactions_project_brand ON transactions (project_id, lower(payment_method_brand), order_id) INCLUDE (payment_method_brand);
CREATE INDEX transactions_project_status ON transactions (project_id, status, order_id);
CREATE INDEX transactions_project_method ON transactions (project_id, payment_method, order_id);

-- description (and bare words) match "contains", ILIKE '%word%', which only a trigram index
-- serves. pg_trgm ships with PostgreSQL's contrib and is a trusted extension; where it is not
-- available (embedded PGlite, or no right to create it) descriptions are matched by scanning
-- the orders the other conditions select. Installed in public, never in a tenant or test
-- schema, so dropping such a schema never takes it away.
DO $$
DECLARE
  ext_schema text;
BEGIN
  SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF ext_schema IS NULL
     AND EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')
     AND EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
      ext_schema := 'public';
    EXCEPTION WHEN insufficient_privilege OR feature_not_supported OR undefined_file OR unique_violation OR duplicate_object THEN
      SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    END;
  END IF;
  IF ext_schema IS NOT NULL THEN
    EXECUTE format('CREATE INDEX orders_description_trgm ON orders USING gin (description %I.gin_trgm_ops)', ext_schema);
  END IF;
END $$;

-- The ledger's balance trigger (020_money) looks journals up by journal_id alone; without an
-- index of its own every insert scanned the whole ledger (seeding a million orders never ended).
DO $$
BEGIN
  IF to_regclass('ledger_entries') IS NOT NULL THEN
    CREATE INDEX IF NOT EXISTS ledger_entries_journal_id ON ledger_entries (journal_id);
  END IF;
END $$;
