-- A row's project_id is checked once, through its parent. Since migration 100 every per-project
-- table below has a foreign key (project_id, parent) -> parent (project_id, id) on columns that are
-- NOT NULL, and the parent's own project_id references projects: so its project exists already.
-- Its direct key to projects checked that again, and each check took a KEY SHARE lock on the one
-- projects row every payment of the merchant shares. Under concurrent payments those locks pile up
-- on that row as multixacts: the costliest part of writing an event, outbox or ledger row
-- (docs/performance-cards.md). The tables that hang only on projects (orders, jobs, data_keys,
-- payment_links, the webhook secret, the idempotency keys, ...) keep theirs; the rule is asserted
-- by test/e2e/distribution-keys.test.ts.
ALTER TABLE transactions DROP CONSTRAINT transactions_project_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_project_id_fkey;
ALTER TABLE outbox DROP CONSTRAINT outbox_project_id_fkey;
ALTER TABLE vault_cards DROP CONSTRAINT vault_cards_project_id_fkey;
ALTER TABLE card_authentications DROP CONSTRAINT card_authentications_project_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_project_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_project_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_project_id_fkey;
ALTER TABLE wallet_a_identities DROP CONSTRAINT wallet_a_identities_project_id_fkey;
ALTER TABLE wallet_a_keys DROP CONSTRAINT wallet_a_keys_project_id_fkey;
ALTER TABLE wallet_a_tokens DROP CONSTRAINT wallet_a_tokens_project_id_fkey;
ALTER TABLE wallet_b_keys DROP CONSTRAINT wallet_b_keys_project_id_fkey;
ALTER TABLE wallet_b_tokens DROP CONSTRAINT wallet_b_tokens_project_id_fkey;
