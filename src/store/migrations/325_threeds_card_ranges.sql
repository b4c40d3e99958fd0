-- EMV 3-D Secure card ranges (docs/three-d-secure.md "Card ranges"): each directory server's
-- ranges as its last PRes left them, with the PRes's serialNum (sent back on the next PReq, so
-- the DS answers only what changed). Not per project: projects bound to the same DS share them.
-- One node refreshes a DS at a time: it takes the row's lease (lease_until) when the refresh is
-- due (next_at: a day after a good PRes, an hour after a failed PReq).
CREATE TABLE IF NOT EXISTS threeds_directory_servers (
  url text PRIMARY KEY,
  serial_num text,
  -- bumped each time the ranges change: nodes reload their copy when it moves
  version bigint NOT NULL DEFAULT 0,
  refreshed_at timestamptz,
  next_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz,
  last_error text
);

CREATE TABLE IF NOT EXISTS threeds_card_ranges (
  ds_url text NOT NULL REFERENCES threeds_directory_servers (url) ON DELETE CASCADE,
  start_range text NOT NULL,
  end_range text NOT NULL,
  acs_start_version text NOT NULL,
  acs_end_version text NOT NULL,
  ds_start_version text,
  ds_end_version text,
  method_url text,
  PRIMARY KEY (ds_url, start_range, end_range)
);
