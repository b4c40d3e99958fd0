// Ready for a distributed engine (issue 21): the schema can be distributed by project_id, as
// Citus requires. Read from the catalog of a freshly migrated store, so a new table, key or
// unique index that breaks the rule fails here. Tables that are not per project are listed
// below with the reason; Citus keeps them as reference tables (docs/scale-out.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshStore } from '../helpers/service.ts';
import type { Db } from '../../src/store/db/db.ts';

/** Not per project, each with why: Citus reference tables (a copy on every node). */
const REFERENCE_TABLES: Record<string, string> = {
  merchants: 'a merchant owns many projects; it is above the distribution key',
  projects: 'the tenants themselves (projects.id is the key every other table is distributed by)',
  api_keys: 'authentication finds the project from the key, before the project is known',
  portal_users: 'a portal user signs in by e-mail to a merchant, across its projects',
  portal_invites: 'an invitation to join a merchant team, before the invited user exists; across its projects',
  portal_sessions: 'a session belongs to a portal user, not to a project',
  portal_sign_in_failures: 'sign-in throttling per account and client address, before any project',
  portal_actions: "one-time tokens of a portal user's confirmed actions, across projects",
  portal_audit: "the merchant's audit log; project_id is optional there (sign-ins have none)",
  throttle_hits: 'rate-limit counters of client addresses, which span projects',
  risk_counters: "velocity counters of cards and addresses; a card's platform counter spans projects",
  platform_risk_lists: "the platform's blocklists and allowlists, which hold for every project",
  platform_audit: "the operator's changes to the platform (its lists), above every merchant",
  card_attempts: 'card-testing counters per client address, across projects',
  payout_schedules: "a merchant's payout schedule; a payout pays the balance of all its projects of a mode",
  payouts: 'a payout pays a merchant the available balance of all its projects of one mode and currency',
  payout_files: 'a SEPA file carries the payouts of many merchants',
  acquirer_link_stans: 'STANs per acquirer terminal and day; projects may share a terminal, every node draws from one row',
  schema_migrations: "the migrator's own list, one per database",
  threeds_directory_servers: "a directory server's serialNum and refresh lease; projects bound to one DS share it",
  threeds_card_ranges: "a directory server's card ranges, shared by every project bound to that DS",
};

let store: { db: Db; drop(): Promise<void> };
before(async () => (store = await freshStore()));
after(async () => store?.drop());

const tables = async () =>
  (
    await store.db.query<{ name: string; has_project: boolean }>(
      `SELECT c.relname AS name, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'project_id' AND NOT a.attisdropped) AS has_project
         FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1`,
    )
  ).map((r) => ({ ...r, reference: r.name in REFERENCE_TABLES }));

test('every table carries project_id, or is a reference table listed with its reason', async () => {
  const all = await tables();
  const missing = all.filter((t) => !t.has_project && !t.reference).map((t) => t.name);
  assert.deepEqual(missing, [], 'tables without project_id: add the column, or list the table above with the reason it is not per project');
  const names = new Set(all.map((t) => t.name));
  assert.deepEqual(
    Object.keys(REFERENCE_TABLES).filter((n) => !names.has(n)),
    [],
    'listed reference tables that no longer exist',
  );
  assert.ok(all.filter((t) => !t.reference).length >= 20, 'the per-project tables were read');
});

test('every primary key and unique index of a per-project table includes project_id', async () => {
  const rows = await store.db.query<{ tbl: string; idx: string; primary: boolean; has_project: boolean }>(
    `SELECT t.relname AS tbl, i.relname AS idx, x.indisprimary AS primary,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'project_id' AND a.attnum = ANY (x.indkey::int2[])) AS has_project
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      WHERE t.relnamespace = current_schema()::regnamespace AND x.indisunique ORDER BY 1, 2`,
  );
  const perProject = rows.filter((r) => !(r.tbl in REFERENCE_TABLES));
  assert.deepEqual(
    perProject.filter((r) => !r.has_project).map((r) => `${r.tbl}.${r.idx}`),
    [],
    'unique indexes without project_id',
  );
  const withKey = new Set(perProject.filter((r) => r.primary).map((r) => r.tbl));
  const all = await tables();
  assert.deepEqual(
    all.filter((t) => !t.reference && !withKey.has(t.name)).map((t) => t.name),
    [],
    'per-project tables without a primary key',
  );
});

test('every foreign key between per-project tables matches project_id to project_id; none points from a reference table to one', async () => {
  const fks = await store.db.query<{ name: string; tbl: string; ref: string; cols: string[]; refcols: string[] }>(
    `SELECT c.conname AS name, c.conrelid::regclass::text AS tbl, c.confrelid::regclass::text AS ref,
            ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS cols,
            ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS refcols
       FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace ORDER BY 2, 1`,
  );
  const bad: string[] = [];
  for (const fk of fks) {
    const fromRef = fk.tbl in REFERENCE_TABLES;
    const toRef = fk.ref in REFERENCE_TABLES;
    const show = `${fk.tbl}(${fk.cols}) -> ${fk.ref}(${fk.refcols})`;
    if (fromRef && !toRef) bad.push(`${show}: a reference table cannot refer to a distributed one`);
    if (!fromRef && !toRef) {
      const i = fk.cols.indexOf('project_id');
      if (i < 0 || fk.refcols[i] !== 'project_id') bad.push(`${show}: project_id must match project_id`);
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(
    fks.filter((fk) => !(fk.tbl in REFERENCE_TABLES) && !(fk.ref in REFERENCE_TABLES)).length >= 20,
    'the foreign keys between per-project tables were read',
  );
});

test("every per-project table's project_id is checked once: by a key to projects, or through a NOT NULL key to a parent that is checked", async () => {
  const fks = await store.db.query<{ tbl: string; ref: string; cols: string[]; not_null: boolean }>(
    `SELECT c.conrelid::regclass::text AS tbl, c.confrelid::regclass::text AS ref,
            ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)) AS cols,
            (SELECT bool_and(a.attnotnull) FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)) AS not_null
       FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`,
  );
  const perProject = (await tables()).filter((t) => !t.reference).map((t) => t.name);
  const direct = new Set(fks.filter((fk) => fk.ref === 'projects').map((fk) => fk.tbl));
  const parents = (tbl: string) =>
    fks.filter((fk) => fk.tbl === tbl && fk.ref !== 'projects' && fk.not_null && fk.cols.includes('project_id')).map((fk) => fk.ref);
  // checked: a key to projects, or a NOT NULL key with project_id to a checked parent
  const checked = new Set(direct);
  for (let grew = true; grew;) {
    grew = false;
    for (const t of perProject)
      if (!checked.has(t) && parents(t).some((p) => checked.has(p))) {
        checked.add(t);
        grew = true;
      }
  }
  // the work list migration 085 fills from transactions and the service empties at its next start
  // and the ledger: a payout's legs have no order (migration 276), so (order_id, project_id) checks
  // the legs of orders only; a key to projects would lock the merchant's projects row from every
  // payment again (migration 120). A payout's legs take their projects from the merchant's own.
  const unchecked = new Set(['holder_names_to_seal', 'ledger_entries']);
  assert.deepEqual(
    perProject.filter((t) => !checked.has(t) && !unchecked.has(t)),
    [],
    'per-project tables whose project_id nothing checks',
  );
  // a direct key as well as a checked parent: each insert would lock the shared projects row for nothing
  const twice = [...direct].filter((t) => parents(t).some((p) => checked.has(p)));
  assert.deepEqual(twice, [], 'per-project tables whose project_id is checked twice (migration 120)');
  assert.ok(direct.has('orders') && checked.has('events'), 'the keys were read');
});
