// Every hand-written row type names exactly its table's columns, on the suite's store (PGlite or
// PostgreSQL): ROWS lists each table's columns, and TypeScript accepts a list only when it has every
// key of the row type and no other (columnsOf), so a column added to a table, or a field to a type,
// without the other fails here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshStore } from '../helpers/service.ts';
import type { Db } from '../../src/store/db/db.ts';

import type { EventRow, JobRow, OrderRow, ProjectRow, TransactionRow } from '../../src/domain/entities.ts';
import type { DataKeyRow } from '../../src/store/platform/keys.ts';
import type { IdempotencyRow } from '../../src/store/platform/idempotency.ts';
import type { WalletAIdentityRow, WalletAKeyRow, WalletBKeyRow, WalletBTokenRow } from '../../src/store/wallets/keys.ts';
import type { CardAuthRow, VaultCardRow } from '../../src/store/vault/cards.ts';
import type { EntryRow } from '../../src/store/payments/ledger.ts';
import type { LinkRow } from '../../src/store/links/payment-links.ts';
import type { AttemptRow, DeliveryRow, SecretRow } from '../../src/store/webhooks/deliveries.ts';
import type { AuditRow, KeyRow, PortalUserRow, SessionRow } from '../../src/store/portal/merchants.ts';
import type { ListRow, PlatformAuditRow } from '../../src/store/risk/lists.ts';

/** The keys of Row, each once: an object literal of this type must name them all and nothing else. */
const columnsOf = <Row>(keys: Record<keyof Row, true>) => ({ columns: Object.keys(keys), whole: true });
/** A type of some columns of its table (what a statement selects): each must be one of the table's. */
const selection = (c: { columns: string[] }) => ({ ...c, whole: false });

/** table: its row type's fields (whole: all of the table's columns) */
const ROWS: Record<string, { columns: string[]; whole: boolean }> = {
  projects: columnsOf<ProjectRow>({
    id: true,
    merchant_id: true,
    name: true,
    mode: true,
    webhook_url: true,
    settings: true,
    clock_offset_ms: true,
    created: true,
  }),
  orders: columnsOf<OrderRow>({
    id: true,
    project_id: true,
    merchant_id: true,
    kind: true,
    status: true,
    merchant_order_id: true,
    description: true,
    currency: true,
    amount: true,
    flags: true,
    customer_email: true,
    merchant_customer_id: true,
    related_order_id: true,
    payment_link_id: true,
    refunded_amount: true,
    body: true,
    created: true,
    modified: true,
    completed: true,
  }),
  transactions: columnsOf<TransactionRow>({
    id: true,
    project_id: true,
    order_id: true,
    status: true,
    payment_method: true,
    payment_method_brand: true,
    currency: true,
    amount: true,
    credit_debit: true,
    capture_mode: true,
    transaction_type: true,
    expiration_period: true,
    expires_at: true,
    is_capturable: true,
    authorized_amount: true,
    captured_amount: true,
    voided_amount: true,
    refunded_amount: true,
    charged_back_amount: true,
    reason: true,
    of_transaction_id: true,
    setup_token: true,
    setup_token_used: true,
    details: true,
    outcomes: true,
    fee_currency: true,
    fee_amount: true,
    settlement_currency: true,
    settlement_amount: true,
    settled: true,
    created: true,
    modified: true,
    authorized: true,
    capture_before: true,
    risk: true,
  }),
  events: selection(columnsOf<EventRow>({ id: true, transaction_id: true, event: true, source: true, occurred: true, noticed: true })),
  jobs: selection(columnsOf<JobRow>({ id: true, project_id: true, kind: true, ref_id: true, payload: true, run_at: true, attempts: true })),
  data_keys: selection(columnsOf<DataKeyRow>({ id: true, project_id: true, wraps: true })),
  idempotency_keys: columnsOf<IdempotencyRow>({
    project_id: true,
    key: true,
    method: true,
    path: true,
    request_hash: true,
    response_status: true,
    response_headers: true,
    response_body: true,
    created: true,
    running_until: true,
  }),
  wallet_b_keys: columnsOf<WalletBKeyRow>({
    id: true,
    project_id: true,
    kind: true,
    recipient_id: true,
    data_key_id: true,
    private_key_ct: true,
    public_key: true,
    created: true,
    retired: true,
  }),
  wallet_b_tokens: columnsOf<WalletBTokenRow>({
    vault_token: true,
    project_id: true,
    transaction_id: true,
    auth_method: true,
    cryptogram_mac: true,
    message_id: true,
    created: true,
  }),
  wallet_a_identities: columnsOf<WalletAIdentityRow>({
    project_id: true,
    data_key_id: true,
    certificate: true,
    private_key_ct: true,
    created: true,
    modified: true,
  }),
  wallet_a_keys: columnsOf<WalletAKeyRow>({
    id: true,
    project_id: true,
    kind: true,
    data_key_id: true,
    private_key_ct: true,
    public_key_hash: true,
    public_pem: true,
    created: true,
    retired: true,
  }),
  vault_cards: columnsOf<VaultCardRow>({
    id: true,
    project_id: true,
    transaction_id: true,
    data_key_id: true,
    pan_ct: true,
    name_ct: true,
    fingerprint: true,
    expiry: true,
    truncated_pan: true,
    brand: true,
    brands: true,
    cvc_ct: true,
    created: true,
  }),
  card_authentications: selection(
    columnsOf<CardAuthRow>({
      transaction_id: true,
      project_id: true,
      vault_token: true,
      trans_status: true,
      eci: true,
      emv: true,
      acquirer_reference: true,
      created: true,
      modified: true,
    }),
  ),
  ledger_entries: columnsOf<EntryRow>({
    id: true,
    project_id: true,
    journal_id: true,
    order_id: true,
    transaction_id: true,
    payment_transaction_id: true,
    account: true,
    currency: true,
    amount: true,
    kind: true,
    created: true,
    payout_id: true,
  }),
  payment_links: columnsOf<LinkRow>({
    id: true,
    project_id: true,
    merchant_id: true,
    merchant_order_id: true,
    description: true,
    currency: true,
    amount: true,
    payment_methods: true,
    expiration_period: true,
    expires_at: true,
    return_url: true,
    webhook_url: true,
    flags: true,
    created: true,
    modified: true,
    completed: true,
  }),
  webhook_deliveries: columnsOf<DeliveryRow>({
    id: true,
    project_id: true,
    order_id: true,
    outbox_id: true,
    seq: true,
    event: true,
    order_status: true,
    target: true,
    resend: true,
    url: true,
    status: true,
    attempts: true,
    next_attempt_at: true,
    last_response_status: true,
    last_error: true,
    created: true,
    completed: true,
  }),
  webhook_attempts: columnsOf<AttemptRow>({
    id: true,
    project_id: true,
    delivery_id: true,
    attempt: true,
    attempted: true,
    url: true,
    response_status: true,
    error: true,
    duration_ms: true,
    next_retry: true,
    response_excerpt: true,
  }),
  webhook_secrets: columnsOf<SecretRow>({
    project_id: true,
    data_key_id: true,
    secret_ct: true,
    previous_ct: true,
    previous_expires: true,
    created: true,
    rotated: true,
  }),
  portal_users: columnsOf<PortalUserRow>({
    id: true,
    merchant_id: true,
    email: true,
    password_hash: true,
    totp_secret_ct: true,
    totp_pending_ct: true,
    totp_last_counter: true,
    role: true,
    created: true,
  }),
  portal_sessions: columnsOf<SessionRow>({ token_hash: true, user_id: true, verified: true, created: true, last_seen: true }),
  portal_audit: columnsOf<AuditRow>({
    id: true,
    merchant_id: true,
    user_id: true,
    email: true,
    project_id: true,
    action: true,
    detail: true,
    address: true,
    created: true,
  }),
  api_keys: selection(columnsOf<KeyRow>({ id: true, hint: true, created: true, last_used: true, revoked: true })),
  risk_lists: selection(
    columnsOf<ListRow>({ id: true, list: true, kind: true, value: true, created: true, created_by: true, expires_at: true, note: true }),
  ),
  platform_risk_lists: selection(
    columnsOf<ListRow>({ id: true, list: true, kind: true, value: true, created: true, created_by: true, expires_at: true, note: true }),
  ),
  platform_audit: columnsOf<PlatformAuditRow>({ id: true, actor: true, action: true, detail: true, created: true }),
};

let store: { db: Db; drop(): Promise<void> };
before(async () => {
  store = await freshStore();
});
after(async () => store?.drop());

test('each row type has exactly the columns of its table', async () => {
  const rows = await store.db.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ANY($1::text[])`,
    [Object.keys(ROWS)],
  );
  for (const [table, { columns, whole }] of Object.entries(ROWS)) {
    const actual = rows.filter((r) => r.table_name === table).map((r) => r.column_name);
    assert.ok(actual.length, `${table} exists`);
    if (whole) assert.deepEqual([...columns].sort(), actual.sort(), `${table}: the row type's fields are its columns`);
    else
      assert.deepEqual(
        columns.filter((c) => !actual.includes(c)),
        [],
        `${table}: the type's fields are columns of the table`,
      );
  }
});
