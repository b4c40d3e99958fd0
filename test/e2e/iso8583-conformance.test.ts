// The ISO 8583 connector passes the connector conformance kit (test/helpers/conformance.ts)
// against `tender acquirer-host` running as its own process, with its journal on a real store
// (both stores: PGlite by default, PostgreSQL with DATABASE_URL).
import { after } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectorConformance } from '../helpers/conformance.ts';
import { futureExpiry } from '../helpers/cards.ts';
import { freshStore } from '../helpers/service.ts';
import { startHostProcess } from '../helpers/acquirer-host.ts';
import { IsoLinks, linkSettings } from '../../src/acquirer/iso8583/links.ts';
import { linkJournal } from '../../src/services/payments/acquirer-link.ts';
import { insertMerchant, insertProject } from '../../src/store/platform/projects.ts';

// the kit's operations name this project; the journal's rows need it to exist (a foreign key)
const KIT_PROJECT = '00000000-0000-4000-8000-000000000001';
const dir = mkdtempSync(join(tmpdir(), 'tender-iso-kit-'));

const ready = (async () => {
  const store = await freshStore();
  const host = await startHostProcess(dir);
  await insertMerchant(store.db, '00000000-0000-4000-8000-0000000000aa', 'Conformance');
  const binding = { acquirer: host.url, terminal_id: 'TKIT0001', card_acceptor_id: 'CONFORMANCE' };
  await insertProject(store.db, {
    id: KIT_PROJECT,
    merchant_id: '00000000-0000-4000-8000-0000000000aa',
    name: 'Conformance',
    mode: 'live',
    settings: { acquirer: binding },
  });
  const links = new IsoLinks(linkJournal(store.db), linkSettings({ timeoutMs: 5000, echoMs: 30_000 }));
  return { store, host, links, project: { id: KIT_PROJECT, settings: { acquirer: binding } } };
})();

after(async () => {
  const { store, host, links } = await ready;
  await links.close();
  host.stop();
  await store.drop();
  rmSync(dir, { recursive: true, force: true });
});

connectorConformance({
  name: 'iso8583 through tender acquirer-host',
  async make() {
    const { links, project } = await ready;
    return links.connectorFor(project)!;
  },
  card: { pan: '4111111111111111', expiry: futureExpiry(), brand: 'visa' },
});
