-- The cards whose CVC is still sealed: only those of payments in flight, so few in any project.
-- An order that ends drops the CVCs of its transactions (payments.ts dropSealedCvc) with
-- "cvc_ct IS NOT NULL AND transaction_id IN (the order's)"; without this index PostgreSQL may walk
-- every card of the project by vault_cards_transaction (a cost that grew with the project:
-- 1,500 cards made that statement 2 ms of the 3-D Secure step). With it, that walk covers only
-- the cards in flight, whatever plan is chosen, also where tables are never analyzed (PGlite has
-- no autovacuum). The price: sealing and removing a CVC are no longer HOT updates (the index's
-- predicate reads cvc_ct), two per card payment.
CREATE INDEX vault_cards_sealed_cvc ON vault_cards (project_id, transaction_id) WHERE cvc_ct IS NOT NULL;
