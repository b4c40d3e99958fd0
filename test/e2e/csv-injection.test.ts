// CSV cells a spreadsheet will not run (issue 28, finding 6): text typed by a merchant or a payer
// that begins with =, +, -, @, a tab or a carriage return is neutralised with a leading single
// quote, in the API's report (both writers) and the portal's download; numbers stay numbers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { csvDownload } from '../helpers/search.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { orderReport } from '../../src/services/reporting/reports.ts';
import { findProject as projectById } from '../../src/store/platform/projects.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

const EVIL = {
  description: `=cmd|' /C calc'!A0`,
  merchant_order_id: '@SUM(A1:A9)',
  city: '+HYPERLINK("//evil.example/x","Click")',
  first_name: '-2+3',
  last_name: '\tTab',
  address: '\rReturn',
};

type Row = Record<string, string>;
const NUMERIC = ['amount', 'refunded_amount', 'transaction.amount_with_decimals', 'transaction.amount', 'transaction.fee_amount'];

function assertNeutralised(rows: Row[], where: string) {
  const row = rows.find((r) => r.merchant_order_id.includes('SUM'))!;
  assert.ok(row, `${where}: the order is in the report`);
  assert.equal(row.description, `'${EVIL.description}`, where);
  assert.equal(row.merchant_order_id, `'${EVIL.merchant_order_id}`, where);
  assert.equal(row['customer.city'], `'${EVIL.city}`, where);
  assert.equal(row['customer.first_name'], `'${EVIL.first_name}`, where);
  assert.equal(row['customer.last_name'], `'${EVIL.last_name}`, where);
  assert.equal(row['customer.address'], `'${EVIL.address}`, where);
  for (const r of rows) for (const c of NUMERIC) assert.match(r[c], /^(-?\d+(\.\d+)?)?$/, `${where}: ${c} is a number`);
  assert.equal(row.amount, '1995');
  assert.equal(row['transaction.amount_with_decimals'], '19.95');
}

test('formula-like text is neutralised in the API report (either writer) and the portal download; amounts stay numbers', async () => {
  const c = validOrder().customer as Record<string, unknown>;
  const paid = await payOrder(t, {
    amount: 1995,
    description: EVIL.description,
    merchant_order_id: EVIL.merchant_order_id,
    customer: { ...c, city: EVIL.city, first_name: EVIL.first_name, last_name: EVIL.last_name, address: EVIL.address },
  });
  // the API trims names and addresses, so a leading tab or carriage return is put in the stored
  // order directly: the writers must neutralise whatever the table holds
  await t.db.query(
    `UPDATE orders SET body = jsonb_set(jsonb_set(body, '{customer,last_name}', to_jsonb($2::text)), '{customer,address}', to_jsonb($3::text))
     WHERE id = $1`,
    [paid.id, EVIL.last_name, EVIL.address],
  );
  const res = await csvDownload(t, t.project.api_key, { query: '*' });
  assert.equal(res.status, 200);
  assertNeutralised(parse(await res.text(), { columns: true }) as Row[], 'API');

  // the other writer gives the same cells (batches on PostgreSQL too, when COPY is not used)
  const project = (await projectById(t.db, t.project.project_id))!;
  const chunks: Buffer[] = [];
  for await (const chunk of orderReport(t.svc.ctx, project, { query: '*' }, new Date(), { copy: false }).stream)
    chunks.push(Buffer.from(chunk));
  assertNeutralised(parse(Buffer.concat(chunks).toString('utf8'), { columns: true }) as Row[], 'batch writer');

  const user = await portalUser(t);
  const portal = new PortalClient(t);
  await portal.signIn(user.email, user.password);
  const download = await portal.get(`/projects/${t.project.project_id}/orders.csv`);
  assert.equal(download.status, 200);
  // the portal's download is one line per payment with its money (its own columns): the typed cells it has are neutralised too
  const rows = parse(download.text, { columns: true }) as Row[];
  const row = rows.find((r) => r.merchant_order_id.includes('SUM'))!;
  assert.ok(row, 'portal: the payment is in the download');
  assert.equal(row.description, `'${EVIL.description}`, 'portal');
  assert.equal(row.merchant_order_id, `'${EVIL.merchant_order_id}`, 'portal');
  for (const r of rows) assert.match(r.amount, /^\d+(\.\d+)?$/, 'portal: amount is a number');
});
