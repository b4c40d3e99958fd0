import type { Db } from '../../store/db/db.ts';
import type { LinkJournal } from '../../acquirer/iso8583/journal.ts';
import { parseHostUrl } from '../../acquirer/iso8583/link.ts';
import * as store from '../../store/payments/acquirer-link.ts';
import { findProject } from '../../store/platform/projects.ts';
import countries from 'i18n-iso-countries';
import { DomainError } from '../../domain/errors.ts';
import type { Ctx } from '../platform/context.ts';
import { createProject, type CreatedProject } from '../platform/tenancy.ts';

/**
 * STANs a node reserves at once per terminal and day. One upsert per message put a round trip
 * and a lock on the terminal's one row in front of every live payment; a block keeps STANs
 * unique across nodes (each draws disjoint blocks) and restarts (a restarted node reserves after
 * what was reserved), and leaves a gap of what a node did not use (a STAN need only be unique).
 */
const STAN_BLOCK = 100;

/** The next STAN of each terminal and day from this node's block, reserving the next block when it is used up. */
function stanBlocks(db: Db) {
  const blocks = new Map<string, { next: number; last: number }>();
  const refills = new Map<string, Promise<void>>();
  const refill = async (key: string, terminal: string, day: string) => {
    // a block that would pass 999999 fails (CHECK): the day's last STANs are drawn one at a time
    const last = await store.reserveStans(db, terminal, day, STAN_BLOCK).catch(() => undefined);
    const one = last === undefined ? await store.reserveStans(db, terminal, day, 1) : 0;
    const block = last === undefined ? { next: one, last: one } : { next: last - STAN_BLOCK + 1, last };
    for (const k of blocks.keys()) if (k.startsWith(`${terminal}|`)) blocks.delete(k); // an earlier day's rest
    blocks.set(key, block);
  };
  return async (terminal: string, day: string): Promise<number> => {
    const key = `${terminal}|${day}`;
    for (;;) {
      const b = blocks.get(key);
      if (b && b.next <= b.last) return b.next++;
      let r = refills.get(key);
      if (!r) {
        r = refill(key, terminal, day).finally(() => refills.delete(key));
        refills.set(key, r);
      }
      await r;
    }
  };
}

/** The journal the ISO 8583 connector writes, on the primary database, one statement at a time (no transaction is open around a call). */
export function linkJournal(db: Db): LinkJournal {
  return {
    nextStan: stanBlocks(db),
    find: (projectId, operationId) => store.findLinkMessage(db, projectId, operationId),
    record: (e, now) => store.insertLinkMessage(db, e, now),
    answered: (projectId, operationId, code, authCode, now) => store.answerLinkMessage(db, projectId, operationId, code, authCode, now),
  };
}

export interface AcquirerBindingInput {
  acquirer?: string;
  terminalId?: string;
  cardAcceptorId?: string;
  refuseUnauthenticated?: boolean;
  /** EMV 3-D Secure (docs/three-d-secure.md): one URL for every brand, or brand=URL,brand=URL */
  directoryServer?: string;
  acquirerBin?: string;
  mcc?: string;
  /** ISO 3166 alpha-2: the project's merchant_country */
  merchantCountry?: string;
  requestorId?: string;
  requestorName?: string;
  /** files on every node (PEM): the client certificate and key for mutual TLS, and the DS's CA */
  dsClientCert?: string;
  dsClientKey?: string;
  dsCa?: string;
}

/** The brand names a directory server may be given for (those Tender already uses). */
const DS_BRANDS = new Set(['visa', 'mastercard', 'amex', 'discover', 'jcb', 'diners', 'unionpay', 'maestro', 'cartes_bancaires']);

/** The 3-D Secure part of a binding, checked; undefined when no directory server is given. */
function checkThreeDs(input: AcquirerBindingInput, project: { id: string; name: string }, allowHttp: boolean) {
  const bad = (m: string) => new DomainError('ValidationError', m);
  const others = [input.acquirerBin, input.mcc, input.requestorId, input.requestorName, input.dsClientCert, input.dsClientKey, input.dsCa];
  if (!input.directoryServer) {
    if (others.some((v) => v !== undefined)) throw bad('the 3-D Secure options need --directory-server');
    return undefined;
  }
  const servers: Record<string, string> = {};
  const parts = input.directoryServer.includes('=') ? input.directoryServer.split(',') : [`*=${input.directoryServer}`];
  for (const part of parts) {
    const at = part.indexOf('=');
    const brand = part.slice(0, at).trim();
    const url = part.slice(at + 1).trim();
    if (brand !== '*' && !DS_BRANDS.has(brand))
      throw bad(`--directory-server: unknown brand ${JSON.stringify(brand)}; known: ${[...DS_BRANDS].join(', ')}`);
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw bad(`--directory-server: ${JSON.stringify(url)} is not a URL`);
    }
    if (u.protocol !== 'https:' && !(allowHttp && u.protocol === 'http:'))
      throw bad('--directory-server: a directory server must be https:// (THREEDS_ALLOW_HTTP=true allows http://, for tests only)');
    servers[brand] = u.toString();
  }
  if (!input.acquirerBin || !/^\d{6,11}$/.test(input.acquirerBin)) throw bad('--acquirer-bin: 6 to 11 digits');
  if (!input.mcc || !/^\d{4}$/.test(input.mcc)) throw bad('--mcc: 4 digits (ISO 18245 merchant category code)');
  if (!input.merchantCountry || !/^[A-Z]{2}$/.test(input.merchantCountry) || !countries.isValid(input.merchantCountry))
    throw bad('--merchant-country: an ISO 3166 alpha-2 country code (NL, DE...)');
  // EMV's threeDSRequestorID is at most 35 characters: the project's uuid without its dashes
  const requestorId = input.requestorId ?? project.id.replace(/-/g, '');
  const requestorName = input.requestorName ?? project.name;
  if (!/^[\x20-\x7e]{1,35}$/.test(requestorId)) throw bad('--requestor-id: 1 to 35 printable ASCII characters');
  if (!requestorName.trim() || requestorName.length > 40) throw bad('--requestor-name: 1 to 40 characters');
  if (Boolean(input.dsClientCert) !== Boolean(input.dsClientKey)) throw bad('--ds-client-cert and --ds-client-key go together');
  const tls = { cert: input.dsClientCert, key: input.dsClientKey, ca: input.dsCa };
  return {
    directory_servers: servers,
    acquirer_bin: input.acquirerBin,
    mcc: input.mcc,
    requestor_id: requestorId,
    requestor_name: requestorName,
    ...(tls.cert || tls.ca ? { tls: Object.fromEntries(Object.entries(tls).filter(([, v]) => v)) } : {}),
  };
}

/** Checks a binding as an operator typed it; every problem is a clear 400. */
export function checkBinding(input: AcquirerBindingInput) {
  const { acquirer, terminalId, cardAcceptorId } = input;
  if (!acquirer || !terminalId || !cardAcceptorId)
    throw new DomainError('ValidationError', 'a binding needs --acquirer iso8583://HOST:PORT, --terminal-id and --card-acceptor-id');
  try {
    parseHostUrl(acquirer);
  } catch (err) {
    throw new DomainError('ValidationError', (err as Error).message);
  }
  // fields 41 (ans 8) and 42 (ans 15): printable ASCII, no longer than the field
  if (!/^[\x21-\x7e][\x20-\x7e]{0,7}$/.test(terminalId))
    throw new DomainError('ValidationError', 'terminal id: 1 to 8 printable ASCII characters');
  if (!/^[\x21-\x7e][\x20-\x7e]{0,14}$/.test(cardAcceptorId))
    throw new DomainError('ValidationError', 'card acceptor id: 1 to 15 printable ASCII characters');
  return {
    acquirer,
    terminal_id: terminalId,
    card_acceptor_id: cardAcceptorId,
    refuse_unauthenticated: input.refuseUnauthenticated === true,
  };
}

/** Binds a live project to an acquiring host (or changes its binding). */
export async function setAcquirer(ctx: Pick<Ctx, 'db' | 'keyCache' | 'config'>, projectId: string, input: AcquirerBindingInput) {
  const checked = checkBinding(input);
  const project = await findProject(ctx.db, projectId);
  if (!project) throw new DomainError('NotFound', `project ${projectId} not found`);
  if (project.mode !== 'live')
    throw new DomainError('ValidationError', 'only live projects take an acquirer binding; test projects use the simulator');
  const threeDs = checkThreeDs(input, project, ctx.config.threeDs.allowHttp);
  const binding = { ...checked, ...(threeDs ? { three_ds: threeDs } : {}) };
  await store.setProjectAcquirer(ctx.db, projectId, binding, threeDs ? input.merchantCountry : undefined);
  ctx.keyCache?.clear(); // this node sees the binding at once; others hear the notification
  return { project_id: projectId, ...binding };
}

/**
 * `tender project create` with an acquirer binding: the binding is checked before the project is
 * made, so a bad one creates nothing.
 */
export async function createBoundProject(
  ctx: Ctx,
  input: { name: string; mode: 'test' | 'live'; merchantId?: string } & AcquirerBindingInput,
): Promise<CreatedProject & { acquirer?: ReturnType<typeof checkBinding> & { three_ds?: ReturnType<typeof checkThreeDs> } }> {
  const wanted =
    input.acquirer !== undefined ||
    input.terminalId !== undefined ||
    input.cardAcceptorId !== undefined ||
    input.directoryServer !== undefined;
  if (!wanted) return createProject(ctx, input);
  if (input.mode !== 'live') throw new DomainError('ValidationError', 'only live projects take an acquirer binding (--mode live)');
  checkBinding(input);
  // the 3-D Secure options are checked before anything is made (the requestor defaults are the project's)
  checkThreeDs(input, { id: 'p', name: input.name }, ctx.config.threeDs.allowHttp);
  const created = await createProject(ctx, input);
  const bound = await setAcquirer(ctx, created.project_id, input);
  const { project_id: _, ...binding } = bound;
  return { ...created, acquirer: binding };
}
