import { randomUUID } from 'node:crypto';
import type { Connector, Outcome } from '../connector.ts';
import { LinkUnknown } from './link.ts';
import { outcomeOf } from './responses.ts';
import type { IsoOperations } from './operations.ts';

/**
 * The ISO 8583 operations behind the connector contract of this branch (no operation ids: each
 * call is a new operation). When the money core's operation-id contract is merged, this adapter
 * gives way to one that passes operation_id through and exposes reverse() and inquire() as they
 * are (docs/acquirer-iso8583.md "Connector contract").
 */
export function isoConnector(ops: IsoOperations, log?: (msg: string, fields: Record<string, unknown>) => void): Connector {
  const follow = (op: 'capture' | 'refund' | 'void') => async (req: Parameters<Connector['capture']>[0]) => {
    if (!req.reference) return outcomeOf('12');
    return ops[op]({ ...req, operation_id: randomUUID(), reference: req.reference });
  };
  return {
    name: 'iso8583',
    authenticate3ds: async (req) => ops.authenticate3ds(req.card),
    completeChallenge: async (req) => ops.authenticate3ds(req.card),
    async authorize(req) {
      const operationId = randomUUID();
      try {
        return await ops.authorize({ ...req, operation_id: operationId });
      } catch (err) {
        if (!(err instanceof LinkUnknown)) throw err;
        // The answer was lost: the authorization may stand at the host. This branch's money core
        // has no recovery of unknown outcomes, so the connector reverses it itself, at once.
        const reversal = await ops
          .reverse({ ...req, operation_id: randomUUID(), original_operation_id: operationId })
          .catch((e: Error) => ({ status: 'error', response_code: '91', response_code_description: e.message }) as Outcome);
        log?.('acquirer answer lost: authorization reversed', { transaction_id: req.transaction_id, reversal: reversal.response_code });
        return { ...outcomeOf('91'), response_code_description: 'No answer from the acquirer: the authorization was reversed' };
      }
    },
    // this connector never answers `processing`: an inquiry has nothing to wait for
    inquire: async () => outcomeOf('96'),
    capture: follow('capture'),
    void: follow('void'),
    refund: follow('refund'),
  };
}
