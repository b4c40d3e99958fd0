import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { balancesOfProject } from '../../services/payouts/balances.ts';
import { getPayout, listPayouts, payoutCsv } from '../../services/payouts/payouts.ts';
import { LINE_TYPES } from '../../domain/payouts/statement.ts';
import { timeZoneOf } from '../../domain/project.ts';
import { answer, errorAnswers } from '../../domain/schemas/common.ts';
import { BasicAuth } from '../auth.ts';

const money = (description: string) => Type.Integer({ description: `${description}, in minor units` });

const BalanceView = Type.Object(
  {
    currency: Type.String({ description: 'ISO 4217' }),
    pending: money('captured, not yet settled by the acquirer, net of fees'),
    available: money('settled, net of fees, refunds and chargebacks, less what payouts took; negative: the next payout carries it'),
    reserved: money('held back by the rolling reserve until its release'),
  },
  { $id: 'Balance' },
);

const Balances = Type.Object(
  { mode: Type.String({ enum: ['test', 'live'] }), balances: Type.Array(BalanceView, { description: 'one per currency, in order' }) },
  { $id: 'Balances' },
);

const PayoutView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    mode: Type.String({ enum: ['test', 'live'] }),
    currency: Type.String(),
    amount: money('what the credit transfer carries'),
    state: Type.String({ enum: ['scheduled', 'sent', 'booked', 'rejected', 'returned'] }),
    period: Type.String({ description: "the schedule's local date the payout is for" }),
    iban: Type.String(),
    name: Type.String(),
    end_to_end_id: Type.String({ description: 'the EndToEndId of its SEPA credit transfer' }),
    return_reason: Type.Optional(
      Type.String({ description: "returned or rejected: the bank's reason code (camt.053 RtrInf, pain.002 StsRsnInf), e.g. AC04" }),
    ),
    created: Type.String(),
    modified: Type.String(),
  },
  { $id: 'Payout' },
);
const PayoutLine = Type.Object(
  {
    type: Type.String({ enum: [...LINE_TYPES] }),
    amount: money('what the line adds to the payout (negative: takes from it)'),
    currency: Type.String(),
    created: Type.String({ description: 'when the money moved on the available balance (settlement, reserve, return)' }),
    order_id: Type.Optional(Type.String({ description: "the movement's own order (a refund's, a chargeback's, ...)" })),
    merchant_order_id: Type.Optional(
      Type.String({ description: "the order's reference, else the reference of the payment it belongs to" }),
    ),
    transaction_id: Type.Optional(Type.String()),
    payout_id: Type.Optional(Type.String({ description: 'payout_return: the payout that came back' })),
  },
  { $id: 'PayoutLine' },
);
const Payouts = Type.Object({ payouts: Type.Array(PayoutView) }, { $id: 'Payouts' });
const PayoutWithLines = Type.Object(
  {
    ...PayoutView.properties,
    lines: Type.Array(PayoutLine, {
      description: "what the payout took from this project's available balance, line by line: the lines add up to this project's share",
    }),
  },
  { $id: 'PayoutWithLines' },
);
const payoutExample = {
  id: '0190b8d2-7c1e-7a3b-9f00-0123456789ab',
  mode: 'live',
  currency: 'EUR',
  amount: 5637,
  state: 'sent',
  period: '2026-12-01',
  iban: 'NL91ABNA0417164300',
  name: 'Shop B.V.',
  end_to_end_id: 'TNE0190B8D27C1E7A3B9F000123456789AB',
  created: '2026-12-01T06:00:00.000Z',
  modified: '2026-12-01T06:00:01.000Z',
};
const PayoutParams = Type.Object({ payout_id: Type.String() });

const example = { mode: 'live', balances: [{ currency: 'EUR', pending: 1934, available: 5637, reserved: 0 }] };

/** Tender's extension: what Tender owes for the API key's project (docs/payouts.md). */
export const balanceRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/balances/',
      {
        schema: {
          summary: "Extension: the project's balances per currency",
          description: 'What Tender owes the merchant for the money of this project: pending, available and reserved (docs/payouts.md).',
          tags: ['payouts'],
          security: BasicAuth,
          response: { 200: answer('The balances', Balances, example), ...errorAnswers(401) },
        },
      },
      async (req) => balancesOfProject(ctx, req.project),
    );
    app.get(
      '/v1/payouts/',
      {
        schema: {
          summary: "Extension: the merchant's payouts in the project's mode, newest first",
          tags: ['payouts'],
          security: BasicAuth,
          response: { 200: answer('The payouts', Payouts, { payouts: [payoutExample] }), ...errorAnswers(401) },
        },
      },
      async (req) => listPayouts(ctx, req.project),
    );
    app.get(
      '/v1/payouts/:payout_id/',
      {
        schema: {
          summary: 'Extension: one payout with its lines',
          tags: ['payouts'],
          security: BasicAuth,
          params: PayoutParams,
          response: {
            200: answer('The payout', PayoutWithLines, {
              ...payoutExample,
              lines: [
                {
                  type: 'payment',
                  amount: 5800,
                  currency: 'EUR',
                  created: '2026-11-30T00:00:05.000Z',
                  order_id: '0190b8d2-7c1e-7a3b-9f00-0123456789ac',
                  merchant_order_id: 'order-1001',
                  transaction_id: '0190b8d2-7c1e-7a3b-9f00-0123456789ad',
                },
                {
                  type: 'fee',
                  amount: -163,
                  currency: 'EUR',
                  created: '2026-11-30T00:00:05.000Z',
                  order_id: '0190b8d2-7c1e-7a3b-9f00-0123456789ac',
                  merchant_order_id: 'order-1001',
                  transaction_id: '0190b8d2-7c1e-7a3b-9f00-0123456789ad',
                },
              ],
            }),
            ...errorAnswers(401, 404),
          },
        },
      },
      async (req) => getPayout(ctx, req.project, req.params.payout_id),
    );
    app.get(
      '/v1/payouts/:payout_id/lines.csv',
      {
        schema: {
          summary: "Extension: one payout's lines as CSV",
          description:
            "The payout's lines of this project (as GET /v1/payouts/{id}/), one per row, times in the project's time zone, amounts as decimals; text cells are neutralised against formula injection (docs/payouts.md).",
          tags: ['payouts'],
          security: BasicAuth,
          params: PayoutParams,
          response: {
            200: {
              description: 'The lines (text/csv)',
              content: {
                'text/csv': {
                  schema: Type.String(),
                  example:
                    'date,type,reference,order_id,transaction_id,payout_id,project,currency,amount\r\n2026-11-30T01:00:05+01:00,payment,order-1001,0190b8d2-7c1e-7a3b-9f00-0123456789ac,0190b8d2-7c1e-7a3b-9f00-0123456789ad,,Shop,EUR,58.00\r\n',
                },
              },
            },
            ...errorAnswers(401, 404),
          },
        },
      },
      async (req, reply) => {
        const out = await payoutCsv(ctx, req.project, req.params.payout_id, timeZoneOf(req.project.settings));
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${out.name}"`)
          .header('cache-control', 'no-store')
          .send(out.csv as never);
      },
    );
  };
