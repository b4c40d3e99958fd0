import type { Db } from '../../store/db/db.ts';
import type { WriteSet } from '../../store/db/writes.ts';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';
import type { OrderStatus } from '../../domain/status.ts';
import type { Connector } from '../../acquirer/connector.ts';
import type { Authenticator } from '../../acquirer/authenticator.ts';
import type { KeyCache } from './key-cache.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * What else an order's status change writes (deliveries, links, sealed CVCs), said as writes
 * gathered in the change's one statement (store/db/writes.ts), from what the step read (`project`:
 * the order's). What a hook needs beyond that, its writes read inside the statement (store parts).
 */
/** `txn`: the transaction whose move changed the order's status, as moved (its status and reason), when one did. */
export type OrderStatusHook = (
  w: WriteSet,
  order: OrderRow,
  from: OrderStatus,
  to: OrderStatus,
  now: Date,
  project: ProjectRow,
  txn?: TransactionRow,
) => void;

/**
 * What else a failed attempt writes when its order stays open (its page can take another
 * payment), in the move's one statement: the order status hooks see no change then.
 */
export type AttemptFailedHook = (w: WriteSet, txn: TransactionRow) => void;

/** Adds to a new project (webhook secret, wallet keys); what it returns is shown once to whoever created it. */
export type ProjectCreatedHook = (ctx: Ctx, projectId: ProjectId) => Promise<void | Record<string, unknown>>;

/** The acquirers: the simulator serves test projects; live projects need one of their own. */
export interface Connectors {
  test: Connector;
  /** the connector of a live project, or undefined when none is configured (its payments are refused) */
  live?: (project: ProjectRow) => Connector | undefined;
}

/** The 3-D Secure servers (acquirer/authenticator.ts): the sandbox's ACS, and a live project's. */
export interface Authenticators {
  test: Authenticator;
  /** a live project's: its EMV 3DS server, or `unauthenticated` when it has no directory server */
  live: (project: ProjectRow) => Authenticator;
}

/** Due work as services and routes see it; the job worker (jobs/) implements it, main.ts wires it. */
export interface DueWork {
  /** Runs every job due on the project's clock now, waiting for those another runner holds; returns how many ran here. */
  settle(projectId: ProjectId): Promise<number>;
}

/**
 * The state of a link to an acquirer (a live connector's connection): /readyz is red while one
 * is down. A live connector registers its own in main.ts (StartOptions.links); the simulator has none.
 */
export interface LinkState {
  /** a short name for /readyz's body and logs, never a key or a secret (an iso8583:// address carries none) */
  name: string;
  /** connected and ready for payments (an ISO 8583 link: connected and signed on) */
  up(): boolean | Promise<boolean>;
  /** what the link tells about itself in /readyz's body (connected, signed on, in flight, last echo) */
  state?(): object;
}

/** What every use case needs, built once by main.ts (docs/architecture.md). */
export interface Ctx {
  db: Db;
  /**
   * Where search, CSV reports and the portal's lists read: the streaming replica
   * (DATABASE_REPLICA_URL), which may lag the primary by a moment, or db itself when unset.
   * Never written to, and never read for what must see the request's own writes.
   */
  replica: Db;
  config: Config;
  log: Logger;
  /** wraps every project's data keys (services/platform/crypto-envelope.ts) */
  masterKey: Buffer;
  /** API key -> project, in a running service (absent in one-off CLI commands) */
  keyCache?: KeyCache;
  connectors: Connectors;
  authenticators: Authenticators;
  dueWork: DueWork;
  /** stopping: set when a graceful stop begins; /readyz then answers 503 so load balancers drain this node first */
  lifecycle: { stopping: boolean };
  /** links to acquirers whose state /readyz reports (a live connector's; none for the simulator) */
  links?: LinkState[];
  hooks: {
    /** in order, when an order's status changes */
    orderStatus: OrderStatusHook[];
    /** in order, when a transaction fails and its order stays open for another attempt */
    attemptFailed: AttemptFailedHook[];
    /** in order, when a project is created */
    projectCreated: ProjectCreatedHook[];
  };
}

/** The project's clock: wall time plus the offset a test project has advanced by. */
export const nowFor = (p: Pick<ProjectRow, 'clock_offset_ms'>) => new Date(Date.now() + Number(p.clock_offset_ms));
