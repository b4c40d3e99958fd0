// Robust parsing and no name-resolution oracle (issue 28, findings 7 and 10): a malformed cookie
// is ignored, a cursor holding a NUL is a ValidationError, and a live project's URL check says
// one thing for every internal name, never what it resolves to.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { isForbiddenAddress } from '../../src/domain/ssrf.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

test("another application's malformed cookie on the host is ignored: the portal's pages and sign-in work", async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  c.cookies.set('analytics', '50%off');
  c.cookies.set('broken', '%E0%A4%A');
  const page = await c.get('/sign-in');
  assert.equal(page.status, 200, page.text);
  const signedIn = await c.post('/sign-in', { email: user.email, password: user.password });
  assert.equal(signedIn.status, 303, signedIn.text);
  assert.equal((await c.get(`/projects/${t.project.project_id}/`)).status, 200);
});

test('a search_after cursor holding a NUL is a ValidationError (400), not a 500', async () => {
  for (const value of ['a\u0000b', '\u0000']) {
    const cursor = Buffer.from(JSON.stringify([value, '00000000-0000-4000-8000-000000000000']), 'utf8').toString('base64url');
    for (const sort of ['merchant_order_id asc', 'created desc']) {
      const res = await t.api('POST', '/v1/search/orders/', { query: '*', sort, search_after: cursor });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.type, 'ValidationError');
      assert.equal(res.body.error.field, 'search_after');
    }
  }
});

test("a live project's URL check does not say what an internal name resolves to", async () => {
  // this machine's own name resolves to a loopback or private address (/etc/hosts, a container's address)
  const name = hostname();
  const addresses = await lookup(name, { all: true });
  assert.ok(
    addresses.some((a) => isForbiddenAddress(a.address)),
    `${name} resolves to ${JSON.stringify(addresses)}: the test needs a name of this machine`,
  );
  const live = await t.newProject('live');
  const res = await t.api('POST', '/v1/orders/', validOrder({ webhook_url: `https://${name}:9/hook` }), { key: live.api_key });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error.type, 'ValidationError');
  assert.equal(res.body.error.field, 'webhook_url');
  assert.match(res.body.error.value, new RegExp(`${name} does not resolve to public addresses only`));
  for (const a of addresses) assert.ok(!res.text.includes(a.address), `the answer names ${a.address}`);
  assert.doesNotMatch(res.text, /loopback|private|link-local/);
});
