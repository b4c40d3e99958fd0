-- Ready for a distributed engine (issue 21, docs/scale-out.md "Sharding by project"): every
-- per-project table's primary key, unique indexes and foreign keys between such tables include
-- project_id, as Citus requires of tables distributed by project_id. The key columns come first
-- and project_id last, so every lookup by id alone still walks the same index.
--
-- Left as they are, and listed with the reason in test/e2e/distribution-keys.test.ts: the tables
-- that are not per project (merchants, projects, api_keys, the portal's users, sessions, actions
-- and audit, throttle_hits, card_attempts, schema_migrations). Citus would keep them as
-- reference tables; a foreign key from a per-project table to one of them (project_id ->
-- projects) is allowed as it is.

-- 1. Foreign keys between per-project tables go (whatever their names); they come back below.
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT c.conname, c.conrelid::regclass AS tbl
      FROM pg_constraint c
     WHERE c.contype = 'f'
       AND c.connamespace = current_schema()::regnamespace
       AND c.confrelid::regclass::text NOT IN ('projects', 'merchants', 'portal_users')
  LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.tbl, r.conname);
  END LOOP;
END $$;

-- 2. Primary keys with project_id.
ALTER TABLE orders DROP CONSTRAINT orders_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE transactions DROP CONSTRAINT transactions_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE events DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE outbox DROP CONSTRAINT outbox_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE jobs DROP CONSTRAINT jobs_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE data_keys DROP CONSTRAINT data_keys_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE vault_cards DROP CONSTRAINT vault_cards_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE card_authentications DROP CONSTRAINT card_authentications_pkey, ADD PRIMARY KEY (transaction_id, project_id);
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE payment_links DROP CONSTRAINT payment_links_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE wallet_b_keys DROP CONSTRAINT wallet_b_keys_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE wallet_b_tokens DROP CONSTRAINT wallet_b_tokens_pkey, ADD PRIMARY KEY (vault_token, project_id);
ALTER TABLE wallet_a_keys DROP CONSTRAINT wallet_a_keys_pkey, ADD PRIMARY KEY (id, project_id);
ALTER TABLE wallet_a_tokens DROP CONSTRAINT wallet_a_tokens_pkey, ADD PRIMARY KEY (vault_token, project_id);
ALTER TABLE holder_names_to_seal DROP CONSTRAINT holder_names_to_seal_pkey, ADD PRIMARY KEY (transaction_id, project_id);

-- 3. Unique indexes with project_id (ON CONFLICT targets in store/ name the same columns).
DROP INDEX transactions_setup_token;
CREATE UNIQUE INDEX transactions_setup_token ON transactions (setup_token, project_id) WHERE setup_token IS NOT NULL;
DROP INDEX jobs_once;
CREATE UNIQUE INDEX jobs_once ON jobs (kind, ref_id, project_id);
DROP INDEX webhook_deliveries_once;
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (outbox_id, url, project_id) WHERE outbox_id IS NOT NULL;

-- 4. The foreign keys again, each with project_id on both sides.
ALTER TABLE transactions ADD FOREIGN KEY (order_id, project_id) REFERENCES orders (id, project_id);
ALTER TABLE events ADD FOREIGN KEY (transaction_id, project_id) REFERENCES transactions (id, project_id);
ALTER TABLE outbox ADD FOREIGN KEY (order_id, project_id) REFERENCES orders (id, project_id);
ALTER TABLE vault_cards ADD FOREIGN KEY (transaction_id, project_id) REFERENCES transactions (id, project_id),
  ADD FOREIGN KEY (data_key_id, project_id) REFERENCES data_keys (id, project_id);
ALTER TABLE card_authentications ADD FOREIGN KEY (transaction_id, project_id) REFERENCES transactions (id, project_id),
  ADD FOREIGN KEY (vault_token, project_id) REFERENCES vault_cards (id, project_id);
ALTER TABLE ledger_entries ADD FOREIGN KEY (order_id, project_id) REFERENCES orders (id, project_id),
  ADD FOREIGN KEY (transaction_id, project_id) REFERENCES transactions (id, project_id),
  ADD FOREIGN KEY (payment_transaction_id, project_id) REFERENCES transactions (id, project_id);
ALTER TABLE webhook_deliveries ADD FOREIGN KEY (order_id, project_id) REFERENCES orders (id, project_id),
  ADD FOREIGN KEY (outbox_id, project_id) REFERENCES outbox (id, project_id);
ALTER TABLE webhook_attempts ADD FOREIGN KEY (delivery_id, project_id) REFERENCES webhook_deliveries (id, project_id);
ALTER TABLE wallet_b_keys ADD FOREIGN KEY (data_key_id, project_id) REFERENCES data_keys (id, project_id);
ALTER TABLE wallet_b_tokens ADD FOREIGN KEY (vault_token, project_id) REFERENCES vault_cards (id, project_id),
  ADD FOREIGN KEY (transaction_id, project_id) REFERENCES transactions (id, project_id);
ALTER TABLE wallet_a_identities ADD FOREIGN KEY (data_key_id, project_id) REFERENCES data_keys (id, project_id);
ALTER TABLE wallet_a_keys ADD FOREIGN KEY (data_key_id, project_id) REFERENCES data_keys (id, project_id);
ALTER TABLE wallet_a_tokens ADD FOREIGN KEY (vault_token, project_id) REFERENCES vault_cards (id, project_id),
  ADD FOREIGN KEY (transaction_id, project_id) REFERENCES transactions (id, project_id);
