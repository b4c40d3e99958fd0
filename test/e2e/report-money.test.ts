// The CSV's transaction.amount_with_decimals is formatted by SQL (so PostgreSQL's COPY can write
// it); it must equal domain/currency.ts formatMinor for every payable currency and any amount.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import cc from 'currency-codes';
import { freshStore } from '../helpers/service.ts';
import { decimalsSql, exponentSql } from '../../src/store/reporting/search.ts';
import { formatMinor, isCurrency } from '../../src/domain/currency.ts';

test('amount_with_decimals in SQL equals formatMinor for every payable currency', async () => {
  const store = await freshStore();
  try {
    const currencies = cc.codes().filter(isCurrency);
    const amounts = [0, 1, -1, 7, 10, 99, 100, 101, 1000, 1234, -1234, 100_000, 123_456_789, -987_654_321, Number.MAX_SAFE_INTEGER];
    const rows = await store.db.query<{ currency: string; amount: string; text: string }>(
      `SELECT c AS currency, a::text AS amount, ${decimalsSql('a', 'x.e')} AS text
         FROM unnest($1::text[]) c CROSS JOIN unnest($2::bigint[]) a CROSS JOIN LATERAL (SELECT ${exponentSql('c')} AS e) x`,
      [currencies, amounts.map(String)],
    );
    assert.equal(rows.length, currencies.length * amounts.length);
    for (const r of rows) assert.equal(r.text, formatMinor(Number(r.amount), r.currency), `${r.amount} ${r.currency}`);
    assert.ok(
      rows.some((r) => r.currency === 'KWD' && r.text === '1.234'),
      'a 3-digit currency is among them',
    );
    assert.ok(
      rows.some((r) => r.currency === 'JPY' && r.text === '1234'),
      'a 0-digit currency is among them',
    );
  } finally {
    await store.drop();
  }
});
