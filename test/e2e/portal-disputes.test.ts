// The portal's disputes (docs/portal.md "Disputes"): a test chargeback makes a dispute the
// Disputes page lists with its deadline; an owner accepts it or defends it with a text and
// files within the evidence limits (each broken); other roles see it and cannot answer; the
// operator takes the defence with `tender disputes evidence`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { exportEvidence, operatorList } from '../../src/services/disputes/disputes.ts';
import { EVIDENCE } from '../../src/domain/disputes.ts';
import { advanceTestClock } from '../../src/services/platform/tenancy.ts';

let t: TestService;
let owner: PortalClient;
let support: PortalClient;
let p: string;
const out = mkdtempSync(join(tmpdir(), 'tender-evidence-'));

before(async () => {
  t = await startTestService();
  p = `/projects/${t.project.project_id}/disputes/`;
  const sign = async (role?: string) => {
    const u = await portalUser(t);
    if (role) await t.db.query('UPDATE portal_users SET role = $1 WHERE email = $2', [role, u.email]);
    const c = new PortalClient(t);
    assert.equal((await c.signIn(u.email, u.password)).status, 303);
    return c;
  };
  owner = await sign();
  support = await sign('support');
});
after(async () => {
  await t?.close();
  rmSync(out, { recursive: true, force: true });
});

async function dispute(amount = 1995) {
  const o = await payOrder(t, { amount });
  assert.equal((await t.api('POST', `/v1/test/orders/${o.id}/chargeback/`, {})).status, 201);
  const list = (await t.api('GET', '/v1/disputes/')).body.disputes as Array<{ id: string; order_id: string }>;
  return list.find((d) => d.order_id === o.id)!.id;
}

const PDF = new TextEncoder().encode('%PDF-1.4\n% a delivery receipt\n');
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

/** Posts the defence form as a browser does: multipart, with the page's CSRF token. */
async function defend(c: PortalClient, id: string, text: string, files: Array<[string, string, Uint8Array]>) {
  await c.get(`${p}${id}/`);
  const form = new FormData();
  form.set('csrf', c.csrf);
  form.set('text', text);
  for (const [name, type, bytes] of files) form.append('files', new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), name);
  const res = await fetch(`${c.base}${p}${id}/defend`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    body: form,
  });
  return { status: res.status, text: await res.text() };
}

const state = async (id: string) => (await t.api('GET', `/v1/disputes/${id}/`)).body.state;

test('the Disputes page lists a test chargeback with its deadline, in English and Dutch', async () => {
  const id = await dispute(1234);
  const en = await owner.get(p);
  assert.equal(en.status, 200);
  assert.match(en.text, /<h1>Disputes<\/h1>/);
  assert.match(en.text, new RegExp(`href="[^"]*${p}${id}/"`));
  assert.match(en.text, /data-dispute-state="open"/);
  assert.match(en.text, /Answer by/);
  const nl = await owner.get(`${p}?lang=nl`);
  assert.match(nl.text, /<h1>Geschillen<\/h1>/);
  assert.match(nl.text, /Antwoorden vóór/);
  await owner.get(`${p}?lang=en`);
  const page = await owner.get(`${p}${id}/`);
  assert.match(page.text, /Test chargeback/);
  assert.match(page.text, /enctype="multipart\/form-data"/);
  assert.equal((await owner.get(`${p}00000000-0000-7000-8000-000000000000/`)).status, 404);
  assert.equal((await owner.get(`${p}not-an-id/`)).status, 404);
});

test('only owners answer: support sees the dispute without the forms, and its posts are refused', async () => {
  const id = await dispute();
  const page = await support.get(`${p}${id}/`);
  assert.equal(page.status, 200);
  assert.doesNotMatch(page.text, /\/defend"/);
  assert.match(page.text, /Only the owners answer disputes/);
  assert.equal((await support.post(`${p}${id}/accept`)).status, 403);
  assert.equal((await defend(support, id, 'no', [])).status, 403);
  assert.equal(await state(id), 'open');
});

test('evidence limits: type, content, count, size and the text, each refused with nothing recorded', async () => {
  const id = await dispute();
  const big = new Uint8Array(EVIDENCE.maxBytes + 1);
  big.set(PDF);
  const cases: Array<[string, Array<[string, string, Uint8Array]>, RegExp]> = [
    ['', [], /say why/],
    ['x'.repeat(EVIDENCE.maxTextChars + 1), [], /at most 5000 characters/],
    ['see file', [['run.exe', 'application/x-msdownload', PDF]], /only PDF, PNG, JPEG or plain text/],
    ['see file', [['fake.pdf', 'application/pdf', PNG]], /not a PDF/],
    ['see file', [['empty.txt', 'text/plain', new Uint8Array(0)]], /empty/],
    ['see files', Array.from({ length: EVIDENCE.maxFiles + 1 }, (_, i) => [`r${i}.pdf`, 'application/pdf', PDF]), /at most 5 files/],
    ['see file', [['big.pdf', 'application/pdf', big]], /at most 2 MB a file/],
  ];
  for (const [text, files, why] of cases) {
    const r = await defend(owner, id, text, files);
    assert.equal(r.status, 400, `${why}: ${r.status} ${r.text.slice(0, 3000)}`);
    assert.match(r.text, why);
  }
  assert.equal(await state(id), 'open');
  assert.equal((await t.db.query('SELECT 1 FROM dispute_evidence WHERE dispute_id = $1', [id])).length, 0);
  // a body beyond every file's limit together is refused before it is read
  const huge = new Uint8Array(EVIDENCE.maxFiles * EVIDENCE.maxBytes + 512 * 1024);
  const r = await defend(owner, id, 'x', [['huge.pdf', 'application/pdf', huge]]);
  assert.equal(r.status, 413);
  assert.equal(await state(id), 'open');
});

test('an owner defends with a text and files; the operator lists it and takes the evidence; a second answer is refused', async () => {
  const id = await dispute();
  const r = await defend(owner, id, 'The parcel was signed for.\nTracking 3SABC.', [
    ['receipt.pdf', 'application/pdf', PDF],
    ['photo.png', 'image/png', PNG],
  ]);
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /Defence recorded/);
  assert.match(r.text, /evidence-1\.pdf/);
  const api = (await t.api('GET', `/v1/disputes/${id}/`)).body;
  assert.equal(api.state, 'defended');
  assert.deepEqual(
    api.evidence.map((e: { name: string; size: number }) => [e.name, e.size]),
    [
      ['evidence-1.pdf', PDF.length],
      ['evidence-2.png', PNG.length],
    ],
  );
  assert.ok((await operatorList(t.svc.ctx)).some((d) => d.id === id && d.state === 'defended'));
  const got = await exportEvidence(t.svc.ctx, id, out);
  assert.deepEqual(readdirSync(got.dir).sort(), ['defence.txt', 'evidence-1.pdf', 'evidence-2.png']);
  assert.deepEqual(new Uint8Array(readFileSync(join(got.dir, 'evidence-1.pdf'))), PDF);
  assert.match(readFileSync(join(got.dir, 'defence.txt'), 'utf8'), /The parcel was signed for\./);
  await owner.get(`${p}${id}/`);
  const again = await owner.post(`${p}${id}/accept`);
  assert.equal(again.status, 400);
  assert.match(again.text, /answered or decided already/);
  const audit = await t.db.query<{ action: string }>(
    "SELECT action FROM portal_audit WHERE action LIKE 'dispute_%' AND detail->>'dispute_id' = $1",
    [id],
  );
  assert.deepEqual(
    audit.map((a) => a.action),
    ['dispute_defended'],
  );
});

test('an owner accepts; the money stays charged back; an accepted dispute has no evidence to take', async () => {
  const id = await dispute();
  await owner.get(`${p}${id}/`);
  const r = await owner.post(`${p}${id}/accept`);
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /Accepted\. The operator is told\./);
  assert.equal(await state(id), 'accepted');
  await assert.rejects(exportEvidence(t.svc.ctx, id, out), /sent no defence/);
});

test('past its deadline a dispute can no longer be answered', async () => {
  const p2 = await t.newProject('test');
  const o = await payOrder(t, {}, { key: p2.api_key });
  assert.equal((await t.api('POST', `/v1/test/orders/${o.id}/chargeback/`, {}, { key: p2.api_key })).status, 201);
  const [d] = (await t.api('GET', '/v1/disputes/', undefined, { key: p2.api_key })).body.disputes as Array<{ id: string }>;
  await advanceTestClock(t.svc.ctx, p2.project_id, 15 * 86_400_000);
  const mine = new PortalClient(t);
  const u = await portalUser(t, p2.merchant_id);
  assert.equal((await mine.signIn(u.email, u.password)).status, 303);
  const path = `/projects/${p2.project_id}/disputes/${d.id}/`;
  const page = await mine.get(path);
  assert.match(page.text, /The deadline to answer has passed/);
  assert.doesNotMatch(page.text, /\/accept"/);
  const r = await mine.post(`${path}accept`);
  assert.equal(r.status, 400);
  assert.match(r.text, /the deadline to answer this dispute has passed/);
  assert.equal((await t.api('GET', `/v1/disputes/${d.id}/`, undefined, { key: p2.api_key })).body.state, 'open');
});
