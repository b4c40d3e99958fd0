import { DomainError } from '../../domain/errors.ts';
import { idempotencyKeyOf, type Connector, type OperationRef, type Outcome } from '../../acquirer/connector.ts';
import { newId } from '../../domain/ids.ts';
import type { TransStatus } from '../../domain/card.ts';
import type { Ctx } from '../platform/context.ts';
import type { ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { guardAuthenticator, guardConnector } from './attempts/call.ts';
import type { Authenticator } from '../../acquirer/authenticator.ts';

/**
 * The acquirer of a project: the simulator for test projects; a live project without one is
 * refused. Its calls run only through callAcquirer (guardConnector).
 */
export function connectorFor(ctx: Pick<Ctx, 'connectors'>, project: ProjectRow): Connector {
  if (project.mode === 'test') return guardConnector(ctx.connectors.test);
  const live = ctx.connectors.live?.(project);
  if (!live) throw new DomainError('Forbidden', 'no acquirer connector is configured for this live project');
  return guardConnector(live);
}

/**
 * The 3-D Secure server of a project (acquirer/authenticator.ts): the sandbox's simulated ACS for
 * test projects, a live project's own (its directory servers, or none). Its calls run only
 * through callAcquirer, as the connector's.
 */
export function authenticatorFor(ctx: Pick<Ctx, 'authenticators'>, project: ProjectRow): Authenticator {
  return guardAuthenticator(project.mode === 'test' ? ctx.authenticators.test : ctx.authenticators.live(project));
}

/** The outcome of a transaction that 3-D Secure refused: no authorization was sent. */
export function authenticationFailed(s: TransStatus): Outcome {
  return {
    status: 'declined',
    reason: 'authentication_failed',
    response_code: `3DS-${s}`,
    response_code_description: s === 'R' ? '3-D Secure authentication rejected by the issuer' : '3-D Secure authentication failed',
  };
}

/** What an operation on a transaction names (connector.ts): its own id and idempotency key, the payment and its money. */
export function operationRef(
  txn: Pick<TransactionRow, 'id' | 'project_id' | 'amount' | 'currency'> & { payment_method?: string | null },
  now: Date,
  operationId: string = newId(),
  amount = txn.amount,
): OperationRef {
  return {
    operation_id: operationId,
    idempotency_key: idempotencyKeyOf(operationId),
    project_id: txn.project_id,
    transaction_id: txn.id,
    amount,
    currency: txn.currency,
    now,
    ...(txn.payment_method ? { payment_method: txn.payment_method } : {}),
  };
}
