import { randomBytes } from 'node:crypto';
import { CARD, CORE_METHODS, WALLET_A, WALLET_B } from '../../domain/payment-methods.ts';
import type { Db, Queryable } from '../db/db.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { settingsOf, type FeeRule } from '../../domain/project.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * `tender seed`: fills a project with realistic orders, fast, straight in SQL (generate_series
 * batches, no API round trips), for demos, search tests and benchmarks.
 *
 * Every kind of order is there: sales (some settled), refunds, chargebacks, manual
 * pre-authorizations open, captured, voided in full or in part and lapsed, declines, expired
 * and cancelled attempts, orders never paid, card and wallet payments, payment link orders.
 * The data obeys the rules the services keep: money counters (captured + voided <=
 * authorized, ...), capture / void / refund / chargeback orders adding up to them, fee and
 * settlement figures, events, and a balanced double-entry ledger (when the ledger exists), so
 * `tender ledger check` passes on seeded data. Open pre-authorizations get their expiry job.
 * Seeded orders send no webhooks (no outbox rows).
 */
export interface SeedOptions {
  projectId: ProjectId;
  orders: number;
  /** orders are created over this many days up to the project's clock (default 365) */
  days?: number;
  /** orders per database transaction (default 5,000) */
  batch?: number;
  /** batches in flight at once on PostgreSQL (default 1; PGlite runs one at a time anyway) */
  concurrency?: number;
  /** merchant_order_id prefix (default ORD-<random>-); with `first`, seeds in parts keep ids unique */
  prefix?: string;
  /** number of the first order (default 1): merchant_order_id is prefix + number */
  first?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface SeedResult {
  project_id: string;
  /** payment orders created; capture, void, refund and chargeback orders come on top */
  orders: number;
  child_orders: number;
  prefix: string;
  from: string;
  to: string;
}

/** Fee of `amt` under a rule given as SQL (bps null: no rule, no fee): as feeFor in domain/currency.ts. */
const fee = (amt: string, bps: string, fixed: string) =>
  `(CASE WHEN ${bps} IS NULL OR (${amt}) = 0 THEN 0 ELSE ((${amt}) * ${bps} + 5000) / 10000 + ${fixed} END)`;

/**
 * One row per payment order of the batch, with its plan and every figure derived from it.
 * Parameters: $1 project, $2 merchant, $3..$4 n range, $5 now, $6 days, $7 prefix, $8 is-test,
 * $9 capture window, $10 expiration period, $11..$16 card / wallet-a / wallet-b fee rules,
 * $17..$20 refund / chargeback fee rules, $21 payment links exist, $22 first number, $23 how many,
 * $24..$26 the card's and the wallets' method names.
 */
const PLAN = `
CREATE TEMP TABLE seed_s ON COMMIT DROP AS
WITH g AS (
  SELECT n, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5, random() AS r6, random() AS r7, random() AS r8, random() AS r9
  FROM generate_series($3::int, $4::int) AS n
), a AS (
  SELECT g.*,
    -- in the order of n, as a shop takes them (the table ends up in created order, as real
    -- ones do), spread evenly over the days; at least an hour old, so every attempt's
    -- 30-minute expiry is behind us
    date_trunc('milliseconds', $5::timestamptz - interval '1 hour' - (1 - ((n - $22::int) + r6) / $23::float8) * ($6::float8 * interval '1 day')) AS created,
    CASE WHEN r4 < 0.60 THEN 'EUR' WHEN r4 < 0.75 THEN 'USD' WHEN r4 < 0.85 THEN 'GBP' WHEN r4 < 0.90 THEN 'JPY' WHEN r4 < 0.95 THEN 'CHF' ELSE 'KWD' END AS currency,
    CASE WHEN r2 < 0.80 THEN $24::text WHEN r2 < 0.90 THEN $25::text ELSE $26::text END AS method,
    CASE WHEN r3 < 0.45 THEN 'visa' WHEN r3 < 0.80 THEN 'mastercard' WHEN r3 < 0.88 THEN 'amex' WHEN r3 < 0.94 THEN 'maestro' ELSE 'cartes_bancaires' END AS brand,
    CASE WHEN r1 < 0.40 THEN 'sale' WHEN r1 < 0.50 THEN 'settled' WHEN r1 < 0.56 THEN 'refund' WHEN r1 < 0.58 THEN 'chargeback'
         WHEN r1 < 0.64 THEN 'preauth' WHEN r1 < 0.72 THEN 'captured' WHEN r1 < 0.75 THEN 'voided' WHEN r1 < 0.77 THEN 'partial_void'
         WHEN r1 < 0.87 THEN 'declined' WHEN r1 < 0.91 THEN 'txn_expired' WHEN r1 < 0.93 THEN 'cancelled' ELSE 'new' END AS plan0,
    ((n::bigint * 7919) % 50000)::int AS cid
  FROM g
), b AS (
  SELECT a.*,
    CASE currency WHEN 'JPY' THEN 100 + floor(r5 * r5 * 30000) WHEN 'KWD' THEN 500 + floor(r5 * r5 * 150000) ELSE 100 + floor(r5 * r5 * 50000) END::bigint AS amount,
    date_trunc('milliseconds', created + (5 + r7 * 55) * interval '1 second') AS auth_at,
    CASE method WHEN $24::text THEN $11::int WHEN $25::text THEN $13::int ELSE $15::int END AS m_bps,
    CASE method WHEN $24::text THEN $12::int WHEN $25::text THEN $14::int ELSE $16::int END AS m_fixed
  FROM a
), c AS (
  SELECT b.*,
    CASE WHEN plan0 = 'preauth' AND auth_at + $9::interval <= $5::timestamptz THEN 'preauth_expired' ELSE plan0 END AS plan,
    -- when the money moved after the authorization: within 3 days, never after now
    date_trunc('milliseconds', auth_at + r9 * LEAST(interval '3 days', $5::timestamptz - auth_at - interval '1 minute')) AS move_at,
    date_trunc('milliseconds', auth_at + r9 * LEAST(interval '3 days', $5::timestamptz - auth_at - interval '1 minute') / 2) AS void_at,
    date_trunc('milliseconds', LEAST(auth_at + interval '1 day', $5::timestamptz - interval '1 second')) AS settled_at,
    date_trunc('milliseconds', auth_at + $9::interval) AS capture_before,
    created + $10::interval AS expires_at,
    date_trunc('milliseconds', created + r9 * interval '20 minutes') AS cancel_at,
    (ARRAY['declined', 'insufficient_funds', 'expired_card', 'authentication_failed'])[1 + floor(r8 * 4)::int] AS decline_reason,
    ($21::boolean AND n % 37 = 0) AS linked
  FROM b
)
SELECT c.*,
  plan IN ('sale', 'settled', 'refund', 'chargeback', 'preauth', 'preauth_expired', 'captured', 'voided', 'partial_void') AS authorized,
  plan IN ('preauth', 'preauth_expired', 'captured', 'voided', 'partial_void') AS preauth,
  plan <> 'new' AS has_txn,
  CASE WHEN plan = 'refund' AND r8 >= 0.5 THEN GREATEST(1, floor(amount * r8 * 0.9))::bigint ELSE amount END AS refund_amt,
  GREATEST(1, floor(amount * (0.2 + 0.5 * r8)))::bigint AS void_part,
  ${fee('amount', 'm_bps', 'm_fixed')} AS sale_fee,
  gen_random_uuid() AS order_id, gen_random_uuid() AS txn_id, gen_random_uuid() AS link_id,
  gen_random_uuid() AS j_main, gen_random_uuid() AS j_end,
  jsonb_build_object(
    'merchant_customer_id', 'cust-' || cid,
    'email_address', 'customer' || cid || '@example.com',
    'first_name', (ARRAY['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Linus', 'Frances', 'Ken'])[1 + cid % 10],
    'last_name', (ARRAY['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Torvalds', 'Allen', 'Thompson', 'Ritchie'])[1 + cid % 11],
    'address_type', 'billing',
    'address', 'Damrak ' || (1 + cid % 200),
    'postal_code', (1000 + cid % 9000) || ' AB',
    'city', (ARRAY['Amsterdam', 'Rotterdam', 'Utrecht', 'Berlin', 'Paris', 'Brussels', 'Madrid'])[1 + cid % 7],
    'country', (ARRAY['NL', 'NL', 'NL', 'DE', 'FR', 'BE', 'ES'])[1 + cid % 7],
    'locale', (ARRAY['nl-NL', 'nl-NL', 'nl-NL', 'de-DE', 'fr-FR', 'nl-BE', 'es-ES'])[1 + cid % 7]
  ) AS customer,
  (ARRAY['Two mugs', 'Gift card', 'Monthly subscription', 'Running shoes', 'Coffee beans 1 kg', 'Concert tickets', 'Phone case', 'Desk lamp'])[1 + n % 8] || ' #' || n AS description,
  $7::text || lpad(n::text, GREATEST(8, length(n::text)), '0') AS merchant_order_id
FROM c;
ANALYZE seed_s;
`;

/** Capture, void, refund and chargeback orders of the batch: one row each. */
const CHILDREN = `
CREATE TEMP TABLE seed_c ON COMMIT DROP AS
SELECT x.*, gen_random_uuid() AS c_order_id, gen_random_uuid() AS c_txn_id, gen_random_uuid() AS c_journal
FROM (
  SELECT s.*, 'refund' AS kind, refund_amt AS c_amount, move_at AS c_at FROM seed_s s WHERE plan = 'refund'
  UNION ALL SELECT s.*, 'chargeback', amount, move_at FROM seed_s s WHERE plan = 'chargeback'
  UNION ALL SELECT s.*, 'capture', amount, move_at FROM seed_s s WHERE plan = 'captured'
  UNION ALL SELECT s.*, 'void', amount, move_at FROM seed_s s WHERE plan = 'voided'
  UNION ALL SELECT s.*, 'void', void_part, void_at FROM seed_s s WHERE plan = 'partial_void'
  UNION ALL SELECT s.*, 'capture', amount - void_part, move_at FROM seed_s s WHERE plan = 'partial_void'
) x;
ALTER TABLE seed_c ADD COLUMN c_fee bigint;
UPDATE seed_c SET c_fee = CASE kind
  WHEN 'capture' THEN ${fee('c_amount', 'm_bps', 'm_fixed')}
  WHEN 'refund' THEN ${fee('c_amount', '$1::int', '$2::int')}
  WHEN 'chargeback' THEN ${fee('c_amount', '$3::int', '$4::int')}
  ELSE 0 END;
`;

const ORDER_STATUS = `CASE WHEN authorized THEN 'completed' WHEN plan = 'declined' THEN 'error' WHEN plan = 'txn_expired' THEN 'expired' WHEN plan = 'cancelled' THEN 'cancelled' ELSE 'new' END`;
const ORDER_COMPLETED = `CASE WHEN authorized OR plan = 'declined' THEN auth_at WHEN plan = 'txn_expired' THEN expires_at WHEN plan = 'cancelled' THEN cancel_at END`;
/** the last time anything touched the order: its completion, or a later capture / void / refund / chargeback */
const ORDER_MODIFIED = `CASE WHEN plan IN ('refund', 'chargeback', 'captured', 'voided', 'partial_void') THEN move_at ELSE COALESCE(${ORDER_COMPLETED}, created) END`;
const FLAG = `CASE plan WHEN 'refund' THEN 'has-refunds' WHEN 'chargeback' THEN 'has-chargebacks' WHEN 'captured' THEN 'has-captures' WHEN 'voided' THEN 'has-voids' WHEN 'partial_void' THEN 'has-voids' END`;

/** $1 project, $2 merchant, $3 is-test */
const ORDERS = `
INSERT INTO orders (id, project_id, merchant_id, kind, status, merchant_order_id, description, currency, amount, flags, customer_email, merchant_customer_id,
                    payment_link_id, refunded_amount, body, created, modified, completed)
SELECT order_id, $1, $2, 'payment', ${ORDER_STATUS}, merchant_order_id, description, currency, amount,
       array_remove(ARRAY[CASE WHEN $3::boolean THEN 'is-test' END, ${FLAG}, CASE WHEN plan = 'partial_void' THEN 'has-captures' END], NULL),
       customer->>'email_address', customer->>'merchant_customer_id', CASE WHEN linked THEN link_id END,
       CASE WHEN plan = 'refund' THEN refund_amt ELSE 0 END,
       jsonb_build_object('return_url', 'https://shop.example/return', 'customer', customer, 'order_url', NOT has_txn),
       created, ${ORDER_MODIFIED}, ${ORDER_COMPLETED}
FROM seed_s ORDER BY n;
INSERT INTO orders (id, project_id, merchant_id, kind, status, merchant_order_id, description, currency, amount, flags, customer_email, merchant_customer_id,
                    related_order_id, refunded_amount, body, created, modified, completed)
SELECT c_order_id, $1, $2, kind, 'completed', merchant_order_id,
       CASE WHEN kind = 'chargeback' THEN 'chargeback' WHEN kind = 'void' AND plan = 'partial_void' THEN 'partial void' ELSE description END,
       currency, c_amount,
       array_remove(ARRAY[CASE WHEN $3::boolean THEN 'is-test' END, CASE kind WHEN 'refund' THEN 'is-refund' WHEN 'chargeback' THEN 'is-chargeback' END], NULL),
       customer->>'email_address', customer->>'merchant_customer_id', order_id, 0,
       jsonb_build_object('customer', customer, 'order_url', false), c_at, c_at, c_at
FROM seed_c ORDER BY n, c_at;
`;

const APPROVED = `jsonb_build_object('processing', jsonb_build_object('status', 'accepted', 'response_code', '00', 'response_code_description', 'Approved'))`;
const DECLINED = `jsonb_build_object('processing', jsonb_build_object('status', 'declined',
  'response_code', CASE decline_reason WHEN 'declined' THEN '05' WHEN 'insufficient_funds' THEN '51' WHEN 'expired_card' THEN '54' ELSE '3DS-N' END,
  'response_code_description', CASE decline_reason WHEN 'declined' THEN 'Do not honor' WHEN 'insufficient_funds' THEN 'Insufficient funds' WHEN 'expired_card' THEN 'Expired card' ELSE '3-D Secure authentication failed' END))`;
const CARD_DETAILS = `jsonb_build_object('truncated_pan', CASE brand WHEN 'amex' THEN '378282*****0005' WHEN 'mastercard' THEN '555555******4444' WHEN 'maestro' THEN '675964******0005' ELSE '411111******1111' END,
  'card_expiry', lpad((1 + n % 12)::text, 2, '0') || (2027 + n % 4), 'liability_shift', true)`;
const TXN_STATUS = `CASE plan WHEN 'sale' THEN 'accepted' WHEN 'refund' THEN 'accepted' WHEN 'chargeback' THEN 'accepted' WHEN 'preauth' THEN 'accepted'
  WHEN 'settled' THEN 'completed' WHEN 'captured' THEN 'completed' WHEN 'partial_void' THEN 'completed' WHEN 'voided' THEN 'cancelled'
  WHEN 'preauth_expired' THEN 'expired' WHEN 'declined' THEN 'declined' WHEN 'txn_expired' THEN 'expired' WHEN 'cancelled' THEN 'cancelled' END`;
const TXN_REASON = `CASE plan WHEN 'voided' THEN 'voided' WHEN 'preauth_expired' THEN 'authorization expired' WHEN 'declined' THEN decline_reason
  WHEN 'txn_expired' THEN 'expired' WHEN 'cancelled' THEN 'cancelled by merchant' END`;
const TXN_MODIFIED = `CASE WHEN plan IN ('refund', 'chargeback', 'captured', 'voided', 'partial_void') THEN move_at WHEN plan = 'settled' THEN settled_at
  WHEN plan = 'preauth_expired' THEN capture_before WHEN plan = 'txn_expired' THEN expires_at WHEN plan = 'cancelled' THEN cancel_at ELSE auth_at END`;
/** the card was entered (3-D Secure ran): brand and card details are known */
const CARD_SEEN = `(authorized OR plan = 'declined')`;

/** $1 project, $2 expiration period text */
const TRANSACTIONS = `
INSERT INTO transactions (id, project_id, order_id, status, payment_method, payment_method_brand, currency, amount, credit_debit, capture_mode,
                          expiration_period, expires_at, is_capturable, authorized_amount, captured_amount, voided_amount, refunded_amount, charged_back_amount,
                          reason, details, outcomes, fee_currency, fee_amount, settlement_currency, settlement_amount, settled, authorized, capture_before, created, modified)
SELECT txn_id, $1, order_id, ${TXN_STATUS}, method, CASE WHEN ${CARD_SEEN} THEN brand END, currency, amount, 'credit', CASE WHEN preauth THEN 'manual' END,
       $2, expires_at, plan = 'preauth',
       CASE WHEN authorized THEN amount ELSE 0 END,
       CASE WHEN plan IN ('sale', 'settled', 'refund', 'chargeback', 'captured') THEN amount WHEN plan = 'partial_void' THEN amount - void_part ELSE 0 END,
       CASE WHEN plan = 'voided' THEN amount WHEN plan = 'partial_void' THEN void_part ELSE 0 END,
       CASE WHEN plan = 'refund' THEN refund_amt ELSE 0 END,
       CASE WHEN plan = 'chargeback' THEN amount ELSE 0 END,
       ${TXN_REASON},
       CASE WHEN ${CARD_SEEN} THEN ${CARD_DETAILS} ELSE '{}'::jsonb END,
       CASE WHEN authorized THEN ${APPROVED} WHEN plan = 'declined' THEN ${DECLINED} END,
       CASE WHEN authorized THEN currency END, CASE WHEN authorized THEN CASE WHEN preauth THEN 0 ELSE sale_fee END END,
       CASE WHEN authorized THEN currency END, CASE WHEN authorized THEN CASE WHEN preauth THEN 0 ELSE amount - sale_fee END END,
       CASE WHEN plan = 'settled' THEN settled_at END,
       CASE WHEN authorized THEN auth_at END, CASE WHEN preauth THEN capture_before END,
       created, ${TXN_MODIFIED}
FROM seed_s WHERE has_txn ORDER BY n;
INSERT INTO transactions (id, project_id, order_id, status, payment_method, payment_method_brand, currency, amount, credit_debit, capture_mode,
                          expiration_period, is_capturable, of_transaction_id, details, outcomes,
                          fee_currency, fee_amount, settlement_currency, settlement_amount, created, modified)
SELECT c_txn_id, $1, c_order_id, CASE kind WHEN 'capture' THEN 'accepted' ELSE 'completed' END, method, brand, currency, c_amount,
       CASE WHEN kind IN ('refund', 'chargeback') THEN 'debit' ELSE 'credit' END, NULL, $2, false, txn_id,
       ${CARD_DETAILS} - 'liability_shift', CASE WHEN kind <> 'chargeback' THEN ${APPROVED} END,
       currency, c_fee, currency,
       CASE WHEN kind = 'void' THEN 0 WHEN kind IN ('refund', 'chargeback') THEN c_amount + c_fee ELSE c_amount - c_fee END,
       c_at, c_at
FROM seed_c ORDER BY n, c_at;
`;

/** $1 project */
const EVENTS = `
INSERT INTO events (id, project_id, transaction_id, event, source, occurred, noticed)
SELECT gen_random_uuid(), $1, s.txn_id, e.event, e.source, e.at, e.at
FROM seed_s s CROSS JOIN LATERAL (VALUES
  (1, 'new', 'set_status', s.created, true),
  (2, 'pending', 'set_status', s.created + interval '3 seconds', ${CARD_SEEN}),
  (3, CASE WHEN s.plan = 'declined' THEN 'declined' ELSE 'accepted' END, 'set_status', s.auth_at, ${CARD_SEEN}),
  (4, CASE s.plan WHEN 'settled' THEN 'completed' WHEN 'captured' THEN 'completed' WHEN 'partial_void' THEN 'completed' WHEN 'voided' THEN 'cancelled'
                  WHEN 'preauth_expired' THEN 'expired' WHEN 'txn_expired' THEN 'expired' WHEN 'cancelled' THEN 'cancelled' END,
      CASE s.plan WHEN 'settled' THEN 'settlement' WHEN 'preauth_expired' THEN 'expiry' WHEN 'txn_expired' THEN 'expiry' ELSE 'merchant' END,
      ${TXN_MODIFIED}, s.plan IN ('settled', 'captured', 'partial_void', 'voided', 'preauth_expired', 'txn_expired', 'cancelled'))
) AS e(ord, event, source, at, present)
WHERE s.has_txn AND e.present
ORDER BY s.n, e.ord;
INSERT INTO events (id, project_id, transaction_id, event, source, occurred, noticed)
SELECT gen_random_uuid(), $1, c.c_txn_id, e.event, CASE WHEN c.kind = 'chargeback' THEN 'issuer' ELSE 'merchant' END, c.c_at, c.c_at
FROM seed_c c CROSS JOIN LATERAL (VALUES (1, 'new'), (2, CASE WHEN c.kind = 'capture' THEN 'accepted' ELSE 'completed' END)) AS e(ord, event)
ORDER BY c.n, c.c_at, e.ord;
`;

/**
 * The journals of every movement, legs as in domain/ledger.ts (positive debits, negative
 * credits; zero legs dropped). $1 project, $2 whether the store has merchant balances (migration 275).
 */
const LEDGER = `
INSERT INTO ledger_entries (project_id, journal_id, order_id, transaction_id, payment_transaction_id, account, currency, amount, kind, created)
SELECT $1, l.journal, s.order_id, s.txn_id, s.txn_id, l.account, s.currency, l.amount, l.kind, l.at
FROM seed_s s CROSS JOIN LATERAL (VALUES
  -- a sale is captured at once; a pre-authorization holds the amount
  (s.j_main, 'acquirer_receivable', s.amount, 'sale', s.auth_at, NOT s.preauth),
  (s.j_main, 'merchant_payable', -s.amount, 'sale', s.auth_at, NOT s.preauth),
  (s.j_main, 'merchant_payable', s.sale_fee, 'fee', s.auth_at, NOT s.preauth),
  (s.j_main, 'fee_income', -s.sale_fee, 'fee', s.auth_at, NOT s.preauth),
  (s.j_main, 'holds', s.amount, 'hold', s.auth_at, s.preauth),
  (s.j_main, 'holds_contra', -s.amount, 'hold', s.auth_at, s.preauth),
  -- a settled sale; a lapsed pre-authorization releases its hold
  (s.j_end, 'acquirer_receivable', -s.amount, 'settlement', s.settled_at, s.plan = 'settled'),
  (s.j_end, 'merchant_payable', s.amount - s.sale_fee, 'settlement', s.settled_at, s.plan = 'settled'),
  -- the merchant's share becomes available; a store from before merchant balances ($2 false) kept only the fee
  (s.j_end, 'bank', CASE WHEN $2::boolean THEN s.amount ELSE s.sale_fee END, 'settlement', s.settled_at, s.plan = 'settled'),
  (s.j_end, 'merchant_available', -(s.amount - s.sale_fee), 'settlement', s.settled_at, s.plan = 'settled' AND $2::boolean),
  (s.j_end, 'holds', -s.amount, 'expiry', s.capture_before, s.plan = 'preauth_expired'),
  (s.j_end, 'holds_contra', s.amount, 'expiry', s.capture_before, s.plan = 'preauth_expired')
) AS l(journal, account, amount, kind, at, present)
WHERE s.authorized AND l.present AND l.amount <> 0;
INSERT INTO ledger_entries (project_id, journal_id, order_id, transaction_id, payment_transaction_id, account, currency, amount, kind, created)
SELECT $1, c.c_journal, c.c_order_id, c.c_txn_id, c.txn_id, l.account, c.currency, l.amount, l.kind, c.c_at
FROM seed_c c CROSS JOIN LATERAL (VALUES
  ('holds', -c.c_amount, c.kind, c.kind IN ('capture', 'void')),
  ('holds_contra', c.c_amount, c.kind, c.kind IN ('capture', 'void')),
  ('acquirer_receivable', c.c_amount, c.kind, c.kind = 'capture'),
  ('merchant_payable', -c.c_amount, c.kind, c.kind = 'capture'),
  ('merchant_payable', c.c_amount, c.kind, c.kind IN ('refund', 'chargeback')),
  ('acquirer_receivable', -c.c_amount, c.kind, c.kind IN ('refund', 'chargeback')),
  ('merchant_payable', c.c_fee, 'fee', c.kind <> 'void'),
  ('fee_income', -c.c_fee, 'fee', c.kind <> 'void')
) AS l(account, amount, kind, present)
WHERE l.present AND l.amount <> 0;
`;

/** Open pre-authorizations lapse at capture_before, as planAuthorized schedules. $1 project. */
const JOBS = `
INSERT INTO jobs (project_id, kind, ref_id, run_at)
SELECT $1, 'authorization_expiry', txn_id::text, capture_before FROM seed_s WHERE plan = 'preauth'
ON CONFLICT (kind, ref_id, project_id) DO NOTHING;
`;

/** A link per linked order: the link's fields are the order's, completed with it. $1 project, $2 merchant, $3 is-test. */
const LINKS = `
INSERT INTO payment_links (id, project_id, merchant_id, merchant_order_id, description, currency, amount, expiration_period, expires_at, return_url, flags, created, modified, completed)
SELECT link_id, $1, $2, merchant_order_id, description, currency, amount, 'P30D', created - interval '1 hour' + interval '30 days', 'https://shop.example/return',
       CASE WHEN $3::boolean THEN ARRAY['is-test'] ELSE ARRAY[]::text[] END, created - interval '1 hour',
       CASE WHEN authorized THEN auth_at ELSE created END, CASE WHEN authorized THEN auth_at END
FROM seed_s WHERE linked;
`;

const rule = (r: FeeRule | undefined): [number | null, number] => (r ? [r.bps ?? 0, r.fixed ?? 0] : [null, 0]);

async function tableExists(q: Queryable, name: string) {
  return (await q.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [name]))[0].t !== null;
}

async function migrated(q: Queryable, name: string) {
  return (await q.query('SELECT 1 FROM schema_migrations WHERE name = $1', [name])).length > 0;
}

/** Seeds `orders` payment orders (and their capture, void, refund and chargeback orders) into a project, `now` its clock. */
export async function seedProject(db: Db, project: ProjectRow, now: Date, opts: SeedOptions): Promise<SeedResult> {
  const total = opts.orders;
  const settings = settingsOf(project.settings);
  const fees = settings.fees as Record<string, FeeRule | undefined>;
  const days = opts.days ?? 365;
  const batch = opts.batch ?? 5000;
  const prefix = opts.prefix ?? `ORD-${randomBytes(3).toString('hex')}-`;
  const isTest = project.mode === 'test';
  const withLedger = await tableExists(db, 'ledger_entries');
  const withLinks = await tableExists(db, 'payment_links');
  const withBalances = withLedger && (await migrated(db, '275_merchant_balances.sql'));
  const params = [
    project.id,
    project.merchant_id,
    0,
    0,
    now,
    days,
    prefix,
    isTest,
    settings.capture_window,
    settings.default_expiration_period,
    ...rule(fees[CARD]),
    ...rule(fees[WALLET_A]),
    ...rule(fees[WALLET_B]),
    ...rule(fees.refund),
    ...rule(fees.chargeback),
    withLinks,
    opts.first ?? 1,
    total,
    ...CORE_METHODS,
  ];
  const first = opts.first ?? 1;
  const last = first + total - 1;
  const batches: Array<[number, number]> = [];
  for (let from = first; from <= last; from += batch) batches.push([from, Math.min(last, from + batch - 1)]);
  let children = 0;
  let done = 0;
  const one = async ([from, to]: [number, number]) => {
    const p = [...params];
    p[2] = from;
    p[3] = to;
    const made = await db.tx(async (q) => {
      await run(q, PLAN, p);
      await run(q, CHILDREN, [...rule(fees.refund), ...rule(fees.chargeback)]);
      if (withLinks) await run(q, LINKS, [project.id, project.merchant_id, isTest]);
      await run(q, ORDERS, [project.id, project.merchant_id, isTest]);
      await run(q, TRANSACTIONS, [project.id, settings.default_expiration_period]);
      await run(q, EVENTS, [project.id]);
      if (withLedger) await run(q, LEDGER, [project.id, withBalances]);
      await run(q, JOBS, [project.id]);
      return (await q.query<{ n: number }>('SELECT count(*)::int AS n FROM seed_c'))[0].n;
    });
    children += made;
    done += to - from + 1;
    opts.onProgress?.(done, total);
  };
  const lanes = db.kind === 'postgres' ? Math.max(1, opts.concurrency ?? 1) : 1;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, batches.length) }, async () => {
      while (next < batches.length) {
        try {
          await one(batches[next++]);
        } catch (err) {
          next = batches.length; // the other lanes stop after their batch
          throw err;
        }
      }
    }),
  );
  // fresh statistics, so the planner sees the new volume (autovacuum would, minutes later)
  for (const table of [
    'orders',
    'transactions',
    'events',
    ...(withLedger ? ['ledger_entries'] : []),
    ...(withLinks ? ['payment_links'] : []),
  ])
    await db.exec(`ANALYZE ${table}`);
  return {
    project_id: project.id,
    orders: total,
    child_orders: children,
    prefix,
    from: new Date(now.getTime() - 3_600_000 - days * 86_400_000).toISOString(),
    to: new Date(now.getTime() - 3_600_000).toISOString(),
  };
}

/** Runs a script of several statements with the same parameters: each `;`-ended statement on its own. */
async function run(q: Queryable, script: string, params: unknown[]) {
  for (const statement of script
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const used = new Set([...statement.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    // each statement binds exactly the parameters it mentions, renumbered in order
    const numbers = [...used].sort((a, b) => a - b);
    const sql = statement.replace(/\$(\d+)/g, (_, d) => `$${numbers.indexOf(Number(d)) + 1}`);
    await q.query(
      sql,
      numbers.map((n) => params[n - 1]),
    );
  }
}
