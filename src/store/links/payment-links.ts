import type { Queryable } from '../db/db.ts';
import type { Part } from '../db/writes.ts';
import { insertRow, updateRow } from '../payments/orders.ts';
import type { OrderStatus } from '../../domain/status.ts';
import type { ProjectId } from '../../domain/ids.ts';

export interface LinkRow {
  id: string;
  project_id: string;
  merchant_id: string;
  merchant_order_id: string;
  description: string | null;
  currency: string;
  amount: number;
  payment_methods: string[] | null;
  expiration_period: string;
  expires_at: Date;
  return_url: string | null;
  webhook_url: string | null;
  flags: string[];
  created: Date;
  modified: Date;
  completed: Date | null;
}

/** One order of a link, with the reason of its latest transaction. */
export interface LinkOrderRow {
  id: string;
  status: OrderStatus;
  created: Date;
  completed: Date | null;
  reason: string | null;
}

export const insertLink = (q: Queryable, row: LinkRow) => insertRow(q, 'payment_links', row);
/** A link's orders changed (modified), and the first paid one or its expiry completed it. */
export const touchLink = (q: Queryable, id: string, t: Pick<LinkRow, 'modified'> & Partial<Pick<LinkRow, 'completed'>>) =>
  updateRow(q, 'payment_links', id, t);

export async function findLink(q: Queryable, projectId: ProjectId, id: string, lock = false): Promise<LinkRow | undefined> {
  return (
    await q.query<LinkRow>(`SELECT * FROM payment_links WHERE project_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [projectId, id])
  )[0];
}

/** A link by id alone: the public link page knows nothing else. */
export async function linkById(q: Queryable, id: string): Promise<LinkRow | undefined> {
  return (await q.query<LinkRow>('SELECT * FROM payment_links WHERE id = $1', [id]))[0];
}

export async function ordersOfLink(q: Queryable, projectId: ProjectId, linkId: string): Promise<LinkOrderRow[]> {
  return q.query<LinkOrderRow>(
    `SELECT o.id, o.status, o.created, o.completed,
            (SELECT t.reason FROM transactions t WHERE t.project_id = o.project_id AND t.order_id = o.id ORDER BY t.created DESC, t.id DESC LIMIT 1) AS reason
     FROM orders o WHERE o.project_id = $1 AND o.payment_link_id = $2 ORDER BY o.created, o.id`,
    [projectId, linkId],
  );
}

/**
 * A link's order changed status, as a part of the change's one statement (store/db/writes.ts): the
 * link's modified moves, and an order that becomes completed while no other order of the link
 * is (the statement sees them as they were before it) completes the link: the first paid order,
 * also one paid just after the link's expiry moment.
 */
export const followOrderPart = (projectId: ProjectId, linkId: string, orderId: string, now: Date, paid: boolean): Part => ({
  sql: `UPDATE payment_links l SET modified = $4::timestamptz,
          completed = CASE WHEN $5::boolean AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.project_id = $1::uuid
              AND o.payment_link_id = $2::uuid AND o.status = 'completed' AND o.id <> $3::uuid) THEN $4::timestamptz ELSE l.completed END
        WHERE l.project_id = $1::uuid AND l.id = $2::uuid`,
  params: [projectId, linkId, orderId, now, paid],
});

declare module '../db/writes.ts' {
  interface Tables {
    payment_links: LinkRow;
  }
}
