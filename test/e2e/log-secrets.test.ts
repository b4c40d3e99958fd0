// Secrets in URLs never reach the log (issue 42, item 11): an invitation link in the service log let
// whoever reads the log accept an owner invitation before the invitee. This run makes every kind of
// secret a merchant meets (an invitation link, session and form tokens, an API key, a webhook
// secret, a second factor's secret), uses them where a URL carries them, and then greps every line
// the service wrote for each one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { startTestService, type TestService } from '../helpers/service.ts';
import { PASSWORD, PortalClient, portalUser } from '../helpers/portal.ts';
import { maskUrlSecrets } from '../../src/log.ts';

const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

let t: TestService;
before(async () => (t = await startTestService({ logStream })));
after(async () => t?.close());

/** A request sent as written (no URL normalising by the client): malformed paths reach the service as they are. */
function raw(path: string, method = 'GET'): Promise<number> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const shown = (html: string, id: string) => new RegExp(`<code id="${id}">([^<]+)</code>`).exec(html)?.[1];

test('every secret a run makes, in a URL or not, is missing from every line of the log; the invitation shows as /invite/[masked]', async () => {
  const secrets = new Map<string, string>();
  const owner = new PortalClient(t);
  const user = await portalUser(t);
  assert.equal((await owner.signIn(user.email, user.password)).status, 303);
  const p = `/projects/${t.project.project_id}`;

  // an owner invitation: the link, opened, opened wrongly, refused and accepted
  await owner.get(`${p}/team/`);
  const made = await owner.post(`${p}/team/invite`, { email: 'new-owner@team.example', role: 'owner' });
  const link = shown(made.text, 'invite-link')!;
  const token = /\/invite\/([A-Za-z0-9_-]+)$/.exec(link)![1];
  secrets.set('invitation token', token);
  const invitee = new PortalClient(t);
  assert.equal((await invitee.get(`/invite/${token}`)).status, 200);
  const path = new URL(link).pathname;
  assert.equal(await raw(`${path}/more`), 404, 'an unknown route under the link');
  assert.equal(await raw(`${path}?again=1`), 200);
  assert.equal(await raw(`${path}%zz`), 400, 'a malformed path');
  assert.ok((await raw(path, 'DELETE')) >= 400, 'a method the link does not take');
  assert.equal((await invitee.post(`/invite/${token}`, { password: 'short' })).status, 400);
  assert.equal((await invitee.post(`/invite/${token}`, { password: PASSWORD })).location, '/portal/sign-in');
  assert.equal((await invitee.signIn('new-owner@team.example', PASSWORD)).status, 303);

  // the other secrets of the portal: a new API key, a webhook secret, a second factor
  await owner.get(`${p}/settings/`);
  const key = shown((await owner.post(`${p}/settings/keys`)).text, 'new-api-key')!;
  secrets.set('API key', key);
  await owner.get(`${p}/settings/`);
  secrets.set('webhook secret', shown((await owner.post(`${p}/settings/webhook-secret`)).text, 'new-webhook-secret')!);
  await owner.get(`${p}/settings/`);
  await owner.post(`${p}/settings/totp/setup`);
  secrets.set('second factor secret', shown((await owner.get(`${p}/settings/`)).text, 'totp-secret')!);
  for (const [name, c] of [
    ['owner', owner],
    ['invitee', invitee],
  ] as const)
    for (const [cookie, value] of c.cookies) secrets.set(`${name} cookie ${cookie}`, value);
  secrets.set('form token', owner.csrf);

  // the API key where clients put it by mistake: in the path and in the query
  await t.api('GET', `/v1/orders/${key}/`, undefined, { key });
  await t.api('GET', `/v1/orders/?api_key=${key}`, undefined, { key });

  // an error that quotes the link, as a failing call or a bug would
  t.svc.ctx.log.warn({ err: new Error(`could not open ${link}`), url: link, detail: { link } }, `failed on ${link}`);
  t.svc.ctx.log.warn({ err: `could not open ${link}` }, 'database unavailable');

  const log = lines.join('');
  assert.ok(lines.length > 20, 'the run was logged');
  const leaked = [...secrets].filter(([, value]) => value.length >= 8 && log.includes(value)).map(([name]) => name);
  assert.deepEqual(leaked, [], 'no secret of the run is in the log');
  assert.ok(log.includes('/invite/[masked]'), 'the invitation requests are in the log, their token masked');
  assert.ok(
    [...secrets.values()].every((v) => v.length >= 8),
    'every secret is long enough to be searched for',
  );
});

test('the line masking keeps what the log needs: ids, times, routes', () => {
  const id = '01a21511-8176-7123-9456-aabbccddeeff';
  const line = `{"level":30,"time":1764633600000,"url":"/portal/invite/9uAltgOdXq2-_abcdEFGH12345678","order":"${id}","route":"/invite/:token"}`;
  assert.equal(
    maskUrlSecrets(line),
    `{"level":30,"time":1764633600000,"url":"/portal/invite/[masked]","order":"${id}","route":"/invite/:token"}`,
  );
});
