-- A list entry's optional expiry and note (docs/risk.md "Lists"): an entry whose expires_at has
-- passed matches no payment (store/risk/lists.ts listHits) and is listed as expired until it is
-- removed or added again. The note is the merchant's or operator's own words (why it is listed).
ALTER TABLE risk_lists ADD COLUMN IF NOT EXISTS expires_at timestamptz;
ALTER TABLE risk_lists ADD COLUMN IF NOT EXISTS note text;
ALTER TABLE platform_risk_lists ADD COLUMN IF NOT EXISTS expires_at timestamptz;
ALTER TABLE platform_risk_lists ADD COLUMN IF NOT EXISTS note text;
