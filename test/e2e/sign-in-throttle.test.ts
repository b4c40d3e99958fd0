// Sign-in that holds (issue 28, findings 1 and 2): passwords and second-factor codes are counted
// per account and per address by atomic statements before they are checked, locks grow, an owner
// with a second factor passes a locked account, and failures and locks are in the audit log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshStore, startTestService, type TestService } from '../helpers/service.ts';
import { PASSWORD, PortalClient, portalUser } from '../helpers/portal.ts';
import { base32Decode, totp } from '../../src/domain/totp.ts';
import { confirmTotp, startTotpSetup } from '../../src/services/portal/users.ts';
import { userByEmail } from '../../src/store/portal/merchants.ts';
import * as throttle from '../../src/store/portal/sign-in-throttle.ts';

let t: TestService;
before(async () => {
  t = await startTestService({ env: { PORTAL_SIGNIN_LOCK_SECONDS: '60', PORTAL_SIGNIN_MAX_FAILURES_PER_ADDRESS: '500' } });
});
after(async () => t?.close());

const tally = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((a, r) => ((a[r.status] = (a[r.status] ?? 0) + 1), a), {});

async function auditOf(email: string): Promise<Array<{ action: string; detail: Record<string, unknown> }>> {
  return t.db.query('SELECT action, detail FROM portal_audit WHERE email = $1 ORDER BY created, id', [email]);
}

/** A user whose second factor is on; answers its secret. */
async function withSecondFactor(): Promise<{ email: string; secret: Buffer }> {
  const u = await portalUser(t);
  const user = (await userByEmail(t.db, u.email))!;
  const setup = await startTotpSetup(t.svc.ctx, user);
  const secret = base32Decode(setup.secret)!;
  assert.equal(await confirmTotp(t.svc.ctx, user, totp(secret, Date.now() / 1000), '127.0.0.9'), true);
  return { email: u.email, secret };
}

/** A code that is not the right one now (nor one step either side). */
function wrongCode(secret: Buffer): string {
  const now = Date.now() / 1000;
  const near = new Set([-30, 0, 30].map((d) => totp(secret, now + d)));
  for (let i = 0; ; i++) {
    const c = String(i).padStart(6, '0');
    if (!near.has(c)) return c;
  }
}

test('20 wrong passwords at once: every one counted, at most the limit checked, and the right password is then refused (429)', async () => {
  const user = await portalUser(t);
  const clients = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const c = new PortalClient(t);
      await c.get('/sign-in');
      return c;
    }),
  );
  const results = await Promise.all(clients.map((c, i) => c.post('/sign-in', { email: user.email, password: `wrong-${i}-password` })));
  const counts = tally(results);
  assert.deepEqual(Object.keys(counts).sort(), ['401', '429'], JSON.stringify(counts));
  assert.ok(counts[401] <= 4, `at most four wrong passwords are checked before the lock: ${JSON.stringify(counts)}`);
  const right = await new PortalClient(t).signIn(user.email, PASSWORD);
  assert.equal(right.status, 429, 'the account is locked: the right password too');
  assert.ok(Number(right.headers.get('retry-after')) > 1);
  const log = await auditOf(user.email);
  assert.equal(log.filter((e) => e.action === 'sign_in_failed').length, counts[401] + 1, 'each checked failure, and the one that locked');
  const locks = log.filter((e) => e.action === 'sign_in_locked');
  assert.equal(locks.length, 1, 'one lock, however many requests raced to it');
  assert.equal(locks[0].detail.scope, 'account');
});

test('8 parallel sign-ins with the right password lock nothing: each is signed in or told to retry in a second (issue 42, item 13)', async () => {
  const user = await portalUser(t);
  const clients = await Promise.all(
    Array.from({ length: 8 }, async () => {
      const c = new PortalClient(t);
      await c.get('/sign-in');
      return c;
    }),
  );
  const results = await Promise.all(clients.map((c) => c.post('/sign-in', { email: user.email, password: PASSWORD })));
  const counts = tally(results);
  assert.ok(counts[303] >= 1, JSON.stringify(counts));
  for (const r of results.filter((r) => r.status !== 303)) {
    assert.equal(r.status, 429, r.text);
    assert.equal(r.headers.get('retry-after'), '1', 'past the limit while the others were checked: retry at once, not a lock');
  }
  const log = await auditOf(user.email);
  assert.deepEqual(
    log.filter((e) => e.action.startsWith('sign_in_')),
    [],
    'no failure and no lock in the audit log',
  );
  const counted = await t.db.query<{ scope: string; failures: number; locked_until: Date | null }>(
    'SELECT scope, failures, locked_until FROM portal_sign_in_failures WHERE scope = $1',
    [`account:${user.email}`],
  );
  assert.ok(
    counted.every((r) => r.failures === 0 && r.locked_until === null),
    JSON.stringify(counted),
  );
  const again = await new PortalClient(t).signIn(user.email, PASSWORD);
  assert.equal(again.status, 303, 'the account is not locked');
});

test('second-factor codes are throttled: wrong codes lock (429, Retry-After), the right code is then refused, all audited', async () => {
  const { email, secret } = await withSecondFactor();
  const c = new PortalClient(t);
  assert.equal((await c.signIn(email, PASSWORD)).location, '/portal/sign-in/code');
  await c.get('/sign-in/code');
  const wrong = wrongCode(secret);
  const results = await Promise.all(Array.from({ length: 20 }, () => c.post('/sign-in/code', { code: wrong })));
  const counts = tally(results);
  assert.deepEqual(Object.keys(counts).sort(), ['401', '429'], JSON.stringify(counts));
  assert.ok(counts[401] <= 4, JSON.stringify(counts));
  const locked = results.find((r) => r.status === 429)!;
  assert.ok(Number(locked.headers.get('retry-after')) >= 1);
  assert.match(locked.text, /Too many failed sign-ins/);
  const right = await c.post('/sign-in/code', { code: totp(secret, Date.now() / 1000 + 30) });
  assert.equal(right.status, 429, 'locked: even the right code');
  assert.equal((await c.get(`/projects/${t.project.project_id}/`)).location, '/portal/sign-in/code', 'still no way in');
  const log = await auditOf(email);
  assert.ok(log.filter((e) => e.action === 'sign_in_failed' && e.detail.factor === 'code').length >= counts[401]);
  assert.ok(log.some((e) => e.action === 'sign_in_locked' && e.detail.scope === 'code'));
});

test('an attacker who locks the account does not keep out an owner with a second factor', async () => {
  const { email, secret } = await withSecondFactor();
  const attacker = new PortalClient(t);
  for (let i = 0; i < 8; i++) await attacker.signIn(email, `guess-${i}-password`);
  assert.equal((await attacker.signIn(email, 'guess-9-password')).status, 429, 'the account is locked');
  const owner = new PortalClient(t);
  const signedIn = await owner.signIn(email, PASSWORD);
  assert.equal(signedIn.status, 303, signedIn.text);
  assert.equal(signedIn.location, '/portal/sign-in/code');
  await owner.get('/sign-in/code');
  // the next step's code: the current one was used up turning the factor on
  const code = await owner.post('/sign-in/code', { code: totp(secret, Date.now() / 1000 + 30) });
  assert.equal(code.status, 303, code.text);
  assert.equal((await owner.get(`/projects/${t.project.project_id}/`)).status, 200);
  assert.equal((await attacker.signIn(email, 'guess-10-password')).status, 429, 'the attacker is still refused');
});

test('store: attempts are counted atomically, a window passes, and each lock is twice the one before up to the ceiling', async () => {
  const { db, drop } = await freshStore();
  try {
    const t0 = new Date('2026-01-01T00:00:00Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    const windowStart = (s: number) => at(s - 900);
    const counted = await Promise.all(Array.from({ length: 30 }, () => throttle.countAttempt(db, 'account:x', t0, windowStart(0))));
    assert.deepEqual(
      counted.map((c) => c.failures).sort((a, b) => a - b),
      Array.from({ length: 30 }, (_, i) => i + 1),
      'thirty parallel attempts: thirty distinct counts',
    );
    const lock = { baseSeconds: 10, maxSeconds: 35, forgetBefore: at(-86_400) };
    const locks = await Promise.all(Array.from({ length: 5 }, () => throttle.lock(db, 'account:x', at(0), lock)));
    assert.equal(locks.filter(Boolean).length, 1, 'one of five racing requests sets the lock');
    assert.deepEqual(locks.find(Boolean), at(10));
    assert.equal((await throttle.countAttempt(db, 'account:x', at(5), windowStart(5))).locked_until?.getTime(), at(10).getTime());
    assert.equal((await throttle.countAttempt(db, 'account:x', at(11), windowStart(11))).failures, 1, 'a fresh count after the lock');
    assert.deepEqual(await throttle.lock(db, 'account:x', at(11), lock), at(31), 'twice as long');
    assert.deepEqual(await throttle.lock(db, 'account:x', at(40), lock), at(75), 'at most the ceiling');
    await throttle.countAttempt(db, 'account:x', at(80), windowStart(80));
    assert.equal((await throttle.countAttempt(db, 'account:x', at(2000), windowStart(2000))).failures, 1, 'the window passed');
    await throttle.clear(db, 'account:x');
    assert.deepEqual(await throttle.lock(db, 'account:x', at(3000), lock), undefined, 'nothing to lock once cleared');
    await throttle.countAttempt(db, 'account:x', at(3000), windowStart(3000));
    assert.deepEqual(await throttle.lock(db, 'account:x', at(3000), lock), at(3010), 'the owner signed in: back to the first lock');
  } finally {
    await drop();
  }
});
