// test:cluster scenario: live payments from the three nodes through one ISO 8583 acquiring host
// (`tender acquirer-host`), one node SIGKILLed mid-run. Checked from the host's own journal: no
// STAN ever used twice; from the primary: every acknowledged payment there, none left in flight
// after recovery, the ledger sound, the host's settlement file reconciled (docs/scale-out.md).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, loop, newFigures, order, type Figures } from './load.ts';
import { sleep, until, type Topology } from './topology.ts';
import { readHostJournal } from '../../src/acquirer/iso8583/host/journal.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

export interface IsoDeps {
  topo: Topology;
  sql: <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;
  check: (ok: boolean, what: string) => void;
  ledgerCheck: () => string;
  lost: (ids: string[]) => Promise<number>;
}

export interface IsoRow {
  scenario: string;
  f: Figures;
  acked: number;
  lost: number;
  duplicates: number | string;
  ledger: string;
}

const tender = (topo: Topology, args: string[]) =>
  spawnSync(process.execPath, [`${ROOT}bin/tender.mjs`, ...args], {
    env: { ...topo.nodeEnv(0), DATABASE_URL: topo.primaryUrl, DATABASE_PREPARED_STATEMENTS: 'on', TENDER_WORKER: 'off' },
    encoding: 'utf8',
  });

export async function isoLink({ topo, sql, check, ledgerCheck, lost }: IsoDeps): Promise<IsoRow> {
  console.log('\n[iso] live payments from three nodes through one ISO 8583 host; one node SIGKILLed mid-run');
  const host = await topo.acquirerHost();
  const made = tender(topo, [
    'project',
    'create',
    '--name',
    'Cluster live shop',
    '--mode',
    'live',
    '--acquirer',
    host.url,
    '--terminal-id',
    'TCLU0001',
    '--card-acceptor-id',
    'CLUSTERSHOP0001',
    '--json',
  ]);
  if (made.status !== 0) throw new Error(`project create --mode live: ${made.stderr}`);
  const live = JSON.parse(made.stdout) as { project_id: string; api_key: string };
  const f = newFigures();
  const c = new Client(topo.lbUrl, live.api_key, f);
  const paid: string[] = [];
  const held: string[] = [];
  const load = loop(4, async (i) => {
    // one in four a pre-authorization, captured at once; the others sales
    if (i % 4 === 3) {
      const o = await c.pay(order(`iso-pre-${i}`), { capture_mode: 'manual' });
      held.push(o.id);
      await c.api('POST', `/v1/orders/${o.id}/transactions/${o.txn}/captures/`, undefined, [201, 409, 422]);
    } else paid.push((await c.pay(order(`iso-${i}`))).id);
  });
  // every node opens its own link to the host on its first live payment
  await until(
    'every node signed on to the host',
    async () => {
      const states = await Promise.all(topo.nodes.map(async (n) => (await (await fetch(`${n.url}/readyz`)).json()).acquirer_links));
      return states.every((s) => s?.some((l: { url: string; signed_on: boolean }) => l.url === host.url && l.signed_on));
    },
    60_000,
    250,
  );
  check(true, 'all three nodes connected and signed on to the one host');
  await sleep(4000);
  const victim = topo.nodes[1];
  topo.killNode(victim);
  console.log(`  node ${victim.n} killed with SIGKILL mid-run`);
  await sleep(6000);
  await load.stop();
  await topo.startNode(victim);

  // the surviving nodes' workers recover what the killed node left in flight
  const inFlight = async () =>
    (
      await sql<{ n: number }>(
        "SELECT count(*)::int AS n FROM acquirer_attempts WHERE project_id = $1 AND status IN ('processing', 'unknown')",
        [live.project_id],
      )
    )[0].n;
  await until('no attempt left in flight', async () => (await inFlight()) === 0, 120_000, 500);
  check(true, 'no attempt left processing after recovery');

  const acked = [...new Set(c.created)];
  const gone = await lost(acked);
  check(gone === 0, `every acknowledged live order is on the primary (${acked.length - gone}/${acked.length})`);
  const states = await sql<{ status: string; n: number }>(
    'SELECT t.status, count(*)::int AS n FROM transactions t WHERE t.order_id = ANY($1::uuid[]) GROUP BY 1 ORDER BY 1',
    [acked],
  );
  const byStatus = Object.fromEntries(states.map((s) => [s.status, s.n]));
  const [{ reversed }] = await sql<{ reversed: number }>(
    "SELECT count(*)::int AS reversed FROM acquirer_attempts WHERE project_id = $1 AND kind = 'reversal' AND status = 'succeeded'",
    [live.project_id],
  );
  check(
    !byStatus.processing && !byStatus.pending,
    `every live payment settled: ${JSON.stringify(byStatus)}; ${reversed} authorizations left unanswered reversed by the recovery`,
  );

  // the host's journal: every request on its own STAN of the day
  const journal = readHostJournal(host.dir);
  const collisions = journal.filter((e) => e.result === 'collision').length;
  const decided = journal.filter((e) => e.result === 'decided');
  const stans = new Set(decided.map((e) => `${e.request.fields[41]}|${e.request.fields[11]}|${e.request.fields[7].slice(0, 4)}`));
  check(
    collisions === 0 && stans.size === decided.length,
    `no STAN collision at the host: ${decided.length} requests decided on ${stans.size} STANs, ${collisions} answered 94`,
  );
  const sent = await sql<{ n: number; stans: number }>(
    'SELECT count(*)::int AS n, count(DISTINCT (day, stan))::int AS stans FROM acquirer_link_messages WHERE project_id = $1',
    [live.project_id],
  );
  check(sent[0].n === sent[0].stans, `Tender's journal: ${sent[0].n} messages on ${sent[0].stans} STANs`);

  const ledger = ledgerCheck();
  check(ledger.startsWith('passed'), `tender ledger check ${ledger}`);
  const [file] = readdirSync(host.dir).filter((x) => x.startsWith('settlement-'));
  const rec = tender(topo, ['reconcile', join(host.dir, file), '--acquirer', host.url]);
  check(rec.status === 0, `tender reconcile ${file}: ${rec.stdout.split('\n')[0]}`);
  return { scenario: 'ISO 8583 host, 3 nodes, 1 SIGKILL', f, acked: acked.length, lost: gone, duplicates: 'n/a', ledger };
}
