-- EMV 3-D Secure of live projects (docs/three-d-secure.md): the ids of the exchange and the
-- authentication value the issuer gave, kept with the card transaction's 3-D Secure between the
-- ARes (or RReq) and the authorization, which sends them in field 48 (EC, AV, DS, VR). NULL for
-- the sandbox's simulated ACS and for payments with no 3-D Secure server.
ALTER TABLE card_authentications ADD COLUMN IF NOT EXISTS emv jsonb;
