import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId, type OrderId, type ProjectId } from '../../src/domain/ids.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

test('a row id is an RFC 9562 version 7 UUID carrying its millisecond', () => {
  const now = Date.UTC(2026, 10, 24, 1, 2, 3, 456);
  const id = newId(now);
  assert.match(id, V7);
  assert.equal(msOf(id), now);
  assert.equal(msOf(newId()) >= now, true);
});

test('ids made later sort later; ids of one millisecond differ in their 74 random bits', () => {
  const earlier = newId(1_000_000_000_000);
  const later = newId(1_000_000_000_001);
  assert.ok(earlier < later);
  const same = new Set(Array.from({ length: 10_000 }, () => newId(1_700_000_000_000)));
  assert.equal(same.size, 10_000);
  // the random part is spread over every hex digit after the version, not stuck
  const tails = [...same].map((id) => id.replaceAll('-', '').slice(13));
  for (let i = 0; i < 19; i++) if (i !== 3) assert.ok(new Set(tails.map((t) => t[i])).size >= 8, `digit ${i} varies`);
});

test('the time field holds up to the year 10889 in 48 bits', () => {
  assert.match(newId(0), /^00000000-0000-7/);
  assert.match(newId(2 ** 48 - 1), /^ffffffff-ffff-7/);
});

test('branded ids: one kind of id is refused where another is meant (checked by the typecheck)', () => {
  const takesProject = (projectId: ProjectId) => projectId;
  const order: OrderId = newId();
  const project: ProjectId = newId();
  // @ts-expect-error -- an order id is not a project id: if the brand stopped working, this line would compile and the typecheck would fail here
  takesProject(order);
  assert.equal(takesProject(project), project, 'a project id (or a plain string from a route) passes');
});
