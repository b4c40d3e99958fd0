import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from './service.ts';
import { payOrder } from './pay.ts';
import { startHostProcess, type HostProcess } from './acquirer-host.ts';
import { startDsHostProcess, type DsHostProcess } from './ds-host.ts';
import { createBoundProject } from '../../src/services/payments/acquirer-link.ts';
import { readHostJournal } from '../../src/acquirer/iso8583/host/journal.ts';
import { parseSecureField } from '../../src/acquirer/iso8583/fields.ts';
import type { Json } from './json.ts';

/**
 * A live project's EMV 3-D Secure set up for a test file: `tender acquirer-host` and `tender
 * ds-host` as processes of their own, a service, and two live projects bound to both, one with
 * the unauthenticated fallback and one refusing unauthenticated payments.
 */
export interface LiveThreeDs {
  t: TestService;
  host: HostProcess;
  ds: DsHostProcess;
  /** the acquiring host's journal folder */
  dir: string;
  dsUrl: string;
  fallback: { project_id: string; api_key: string };
  refusing: { project_id: string; api_key: string };
  /** Pays a new order of `project` with `pan`; its transaction, the field 48 its authorization carried (undefined: none sent), and the lookup's id. */
  pay(
    project: { api_key: string },
    pan: string,
  ): Promise<{ txn: Json; f48: ReturnType<typeof parseSecureField> | undefined; lookup?: string }>;
  /** a new order amount, so the host's journal finds the order's messages by field 4 */
  nextAmount(): number;
  /** the binding `createBoundProject` takes, for another project of the same shop */
  binding(name: string, refuse: boolean): Parameters<typeof createBoundProject>[1];
  close(): Promise<void>;
}

export async function startLiveThreeDs(name: string, shop: string, firstAmount: number): Promise<LiveThreeDs> {
  const dir = mkdtempSync(join(tmpdir(), `tender-${name}-`));
  const [host, ds] = await Promise.all([startHostProcess(dir), startDsHostProcess()]);
  const dsUrl = `${ds.url}/ds`;
  const t = await startTestService({ env: { THREEDS_ALLOW_HTTP: 'true', THREEDS_TIMEOUT_MS: '1500' } });
  const binding = (shopName: string, refuse: boolean) => ({
    merchantId: t.project.merchant_id,
    name: shopName,
    mode: 'live' as const,
    acquirer: host.url,
    terminalId: refuse ? 'T3DS0002' : 'T3DS0001',
    cardAcceptorId: 'SHOP3DS',
    refuseUnauthenticated: refuse,
    directoryServer: dsUrl,
    acquirerBin: '400551',
    mcc: '5999',
    merchantCountry: 'NL',
  });
  const fallback = await createBoundProject(t.svc.ctx, binding(`${shop} shop`, false));
  const refusing = await createBoundProject(t.svc.ctx, binding(`${shop} shop, authenticated only`, true));
  let amount = firstAmount;
  return {
    t,
    host,
    ds,
    dir,
    dsUrl,
    fallback,
    refusing,
    binding,
    nextAmount: () => ++amount,
    async pay(project, pan) {
      const a = ++amount;
      const order = await payOrder(t, { amount: a, currency: 'EUR' }, { key: project.api_key, pan });
      const txn = (order.transactions as Json[])[0];
      const sent = readHostJournal(dir).find((e) => Number(e.request.fields[4]) === a && ['0100', '0200'].includes(e.request.mti));
      const [lookup] = await t.db.query<{ id: string }>(
        "SELECT id FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'three_ds'",
        [txn.id],
      );
      return { txn, f48: sent ? parseSecureField(sent.request.fields[48]!) : undefined, lookup: lookup?.id };
    },
    async close() {
      await t?.close();
      host?.stop();
      ds?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
