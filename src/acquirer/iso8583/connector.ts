import type { Capabilities, Connector } from '../connector.ts';
import type { IsoOperations } from './operations.ts';

/** What the ISO 8583 link does (docs/acquirer-iso8583.md "Connector contract"). */
const ISO8583_CAPABILITIES: Capabilities = {
  // a completion (0220) carries its own amount; refunds are credits (0200/20) of any amount
  partial_capture: true,
  multiple_captures: false,
  partial_refund: true,
  // a void is a reversal (0400) of the pre-authorization
  void: true,
  // 3-D Secure is the project's authenticator's (acquirer/authenticator.ts), not the link's
  three_ds: false,
  // every answer is final: 0110/0210/0230/0410 have no "pending"
  late_answers: false,
  notifications: false,
};

/**
 * The ISO 8583 operations behind the connector contract, passed through with their operation
 * ids. A lost answer throws (LinkUnknown): Tender keeps the attempt processing and its recovery
 * inquires, or for an authorization calls reverse() (services/payments/attempts/inquiry.ts).
 */
export function isoConnector(ops: IsoOperations): Connector {
  return {
    name: 'iso8583',
    capabilities: ISO8583_CAPABILITIES,
    authorize: (req) => ops.authorize(req),
    capture: (req) => ops.capture(req),
    void: (req) => ops.void(req),
    refund: (req) => ops.refund(req),
    reverse: (req) => ops.reverse(req),
    // the journal knows each operation's kind: the one asked about is never needed
    inquire: (req) => ops.inquire(req),
  };
}
