-- A request that calls the acquirer commits its Idempotency-Key's claim before the call (no
-- transaction may stay open across it): the key is "running" until this wall-clock time, then a
-- retry may take it over (its node died). What the retry answers comes from the acquirer attempt
-- whose id the key derives (docs/money.md "Idempotency-Key around an acquirer call").
ALTER TABLE idempotency_keys ADD COLUMN running_until timestamptz;
