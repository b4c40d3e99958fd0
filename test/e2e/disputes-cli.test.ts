// `tender disputes import|list|evidence` as an operator runs them (docs/payouts.md "Disputes"):
// on an embedded store of its own, a host file whose line names no payment is reported with exit
// status 1 and changes nothing; a malformed file is refused with the line's number; the list of a
// store without disputes is empty; an unknown dispute's evidence is a clear error.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedEnv, runTender } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tender-disputes-cli-'));
const env = embeddedEnv(join(dir, 'data'));
const tender = (...args: string[]) => runTender(args, env, 120_000);
after(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = 'date,terminal,rrn,stan,type,amount,currency,authorization_code,dispute_id,reason_code';

test('import reports a line that matches no payment (exit 1), refuses a malformed file, and list and evidence answer clearly', async () => {
  const file = join(dir, 'settlement-2026-12-01.csv');
  writeFileSync(
    file,
    `${HEADER}\n2026-12-01,TNDR0001,000000000001,000001,sale,100,EUR,ABC123,,\n2026-12-01,TNDR0001,000000000001,000001,chargeback,100,EUR,ABC123,DSP000000001,4837\n`,
  );
  const r = await tender('disputes', 'import', file, '--json');
  assert.equal(r.code, 1, r.stderr);
  const body = JSON.parse(r.stdout);
  assert.equal(body.lines, 1, 'the money line is not a dispute');
  assert.deepEqual(
    body.unmatched.map((u: { line: number; reason: string }) => [u.line, u.reason]),
    [[3, 'unknown_payment']],
  );
  const text = await tender('disputes', 'import', file);
  assert.match(text.stdout, /1 dispute line\(s\): 0 applied, 0 applied before, 1 not matched/);

  const bad = join(dir, 'bad.csv');
  writeFileSync(bad, `${HEADER}\n2026-12-01,TNDR0001,000000000001,000001,chargeback,100,EUR,ABC123,,4837\n`);
  const refused = await tender('disputes', 'import', bad);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /line 2: a chargeback needs the host's dispute_id/);

  const list = await tender('disputes', 'list', '--json');
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(JSON.parse(list.stdout), []);
  const none = await tender('disputes', 'evidence', '00000000-0000-7000-8000-000000000000', '--out', join(dir, 'out'));
  assert.notEqual(none.code, 0);
  assert.match(none.stderr, /dispute not found/);
});
