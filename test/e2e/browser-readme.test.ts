import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, freePort } from '../helpers/cli.ts';
import { killed, waitFor } from '../helpers/child-service.ts';
import { launchBrowser, startShop } from '../helpers/browser.ts';
import { basic, request } from '../helpers/service.ts';

/**
 * The README's first screen, followed by a stranger: `npm start` on an empty directory (embedded
 * PGlite, first run, nothing configured), the API key it prints, the order of the README's curl,
 * its order_url opened in Chromium and paid with iDEAL; the order is completed.
 */

const dir = mkdtempSync(join(tmpdir(), 'tender-readme-'));
const children: ChildProcess[] = [];
after(async () => {
  for (const c of children) await killed(c);
  rmSync(dir, { recursive: true, force: true });
});

/** The first screen: what the README says before its first second-level heading. */
const firstScreen = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8').split(/\n## /)[0];

test("the README's first screen: npm start, the printed API key, an iDEAL order paid in Chromium", { timeout: 240_000 }, async () => {
  assert.match(firstScreen, /npm install && npm start/);
  const body = /-d '(\{[^']+\})'/.exec(firstScreen)?.[1];
  assert.ok(body, 'the first screen shows the order to create');
  assert.match(firstScreen, /iDEAL/);

  const port = await freePort();
  // what `npm start` runs (package.json), in a directory of its own, with nothing set but where to listen
  assert.equal(
    JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')).scripts.start,
    'node bin/tender.mjs serve',
  );
  const env: NodeJS.ProcessEnv = { ...process.env, TENDER_DATA_DIR: join(dir, '.tender'), PORT: String(port), HOST: '127.0.0.1' };
  for (const k of ['DATABASE_URL', 'PGOPTIONS', 'PUBLIC_BASE_URL', 'TENDER_MASTER_KEY', 'LOG_LEVEL']) delete env[k];
  const child = spawn(process.execPath, [BIN, 'serve'], { env, cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const key = await waitFor('the printed API key', async () => /API key\s+(test_\S+)/.exec(out)?.[1], 180_000);
  assert.match(out, /project_id\s+\S+/);
  const base = `http://127.0.0.1:${port}`;
  assert.match(out, new RegExp(`API\\s+${base}/v1/`));

  const shop = await startShop();
  const browser = await launchBrowser();
  try {
    const order = JSON.parse(body.replace('https://shop.example/back', `${shop.url}/back`));
    const created = await request(`${base}/v1/orders/`, 'POST', order, { authorization: basic(key) });
    assert.equal(created.status, 201, created.text);
    const page = await (await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-GB' })).newPage();
    await page.goto(created.body.order_url);
    await page.locator('li.method').first().waitFor();
    await page.getByRole('button', { name: /iDEAL/ }).click();
    await page.getByLabel('Choose your bank').selectOption('INGBNL2A');
    await page.getByRole('button', { name: 'Paid', exact: true }).click();
    await page.waitForURL(`${shop.url}/back?**`);
    const got = await request(`${base}/v1/orders/${created.body.id}/`, 'GET', undefined, { authorization: basic(key) });
    assert.equal(got.body.status, 'completed');
    assert.deepEqual(
      got.body.transactions.map((x: { payment_method: string; status: string }) => `${x.payment_method} ${x.status}`),
      ['ideal completed'],
    );
  } finally {
    await browser.close();
    await shop.close();
  }
});
