import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyCache } from '../../src/services/platform/key-cache.ts';
import type { ProjectRow } from '../../src/domain/entities.ts';

const project = (name = 'Shop'): ProjectRow => ({
  id: 'p1',
  merchant_id: 'm1',
  name,
  mode: 'test',
  webhook_url: null,
  settings: { wallet_b_clock: undefined },
  clock_offset_ms: 0,
  created: new Date(0),
});

function counting(rows: Array<ProjectRow | undefined>) {
  let calls = 0;
  return { load: async () => rows[Math.min(calls++, rows.length - 1)], calls: () => calls };
}

test('a hit within the TTL does not load again; a copy is returned each time', async () => {
  const cache = new KeyCache(60_000);
  const src = counting([project()]);
  const a = await cache.get('h', src.load);
  const b = await cache.get('h', src.load);
  assert.equal(src.calls(), 1);
  assert.deepEqual(a, b);
  a!.name = 'changed by a request';
  assert.equal((await cache.get('h', src.load))!.name, 'Shop');
});

test('clear() makes the next lookup load again', async () => {
  const cache = new KeyCache(60_000);
  const src = counting([project('before'), project('after')]);
  await cache.get('h', src.load);
  cache.clear();
  assert.equal((await cache.get('h', src.load))!.name, 'after');
  assert.equal(src.calls(), 2);
});

test('unknown keys are not cached', async () => {
  const cache = new KeyCache(60_000);
  const src = counting([undefined, project()]);
  assert.equal(await cache.get('h', src.load), undefined);
  assert.equal((await cache.get('h', src.load))!.name, 'Shop');
});

test('a lookup that started before a clear() does not cache what it read', async () => {
  const cache = new KeyCache(60_000);
  let release!: () => void;
  const slow = () => new Promise<ProjectRow>((resolve) => (release = () => resolve(project('stale'))));
  const pending = cache.get('h', slow);
  cache.clear(); // the change commits while the old row is on its way
  release();
  assert.equal((await pending)!.name, 'stale');
  const src = counting([project('fresh')]);
  assert.equal((await cache.get('h', src.load))!.name, 'fresh');
  assert.equal(src.calls(), 1);
});

test('a TTL of 0 caches nothing; an expired entry loads again', async () => {
  const off = new KeyCache(0);
  const src = counting([project()]);
  await off.get('h', src.load);
  await off.get('h', src.load);
  assert.equal(src.calls(), 2);
  const short = new KeyCache(20);
  const src2 = counting([project('one'), project('two')]);
  await short.get('h', src2.load);
  await new Promise((r) => setTimeout(r, 40));
  assert.equal((await short.get('h', src2.load))!.name, 'two');
});
