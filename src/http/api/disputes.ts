import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { getDispute, listDisputes } from '../../services/disputes/disputes.ts';
import { DISPUTE_STATES } from '../../domain/disputes.ts';
import { answer, errorAnswers } from '../../domain/schemas/common.ts';
import { BasicAuth } from '../auth.ts';

const money = (description: string) => Type.Integer({ description: `${description}, in minor units` });
const STAGES = ['chargeback', 'second_presentment', 'pre_arbitration'];

const DisputeView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    order_id: Type.String({ format: 'uuid', description: 'the order whose payment is disputed' }),
    source: Type.String({ enum: ['acquirer', 'test'], description: "acquirer: from the host's settlement file; test: a test chargeback" }),
    host_dispute_id: Type.Optional(Type.String({ description: "the acquirer's id of the dispute" })),
    reason_code: Type.Optional(
      Type.String({ description: "the scheme's reason code, e.g. 4837 (Mastercard: no cardholder authorization)" }),
    ),
    currency: Type.String(),
    amount: money('what the chargeback took'),
    state: Type.String({
      enum: DISPUTE_STATES,
      description: 'open: awaiting the merchant; accepted or defended: answered; won: the acquirer won it back; lost: taken again',
    }),
    deadline: Type.String({ description: 'the merchant accepts or defends it before this' }),
    defence: Type.Optional(Type.String({ description: "the merchant's text, once defended" })),
    answered: Type.Optional(Type.String()),
    stages: Type.Array(
      Type.Object({
        stage: Type.String({ enum: STAGES }),
        amount: Type.Integer(),
        reason_code: Type.Optional(Type.String()),
        date: Type.String({ description: "the settlement file's date" }),
        order_id: Type.Optional(Type.String({ description: 'the chargeback or reversal order the stage made' })),
      }),
      { description: 'in order: a chargeback, then perhaps a second presentment (credited back), then a pre-arbitration (debited again)' },
    ),
    evidence: Type.Array(Type.Object({ name: Type.String(), content_type: Type.String(), size: Type.Integer() }), {
      description: 'the files of the defence (only on GET /v1/disputes/{id}/)',
    }),
    created: Type.String(),
    modified: Type.String(),
  },
  { $id: 'Dispute' },
);
const Disputes = Type.Object({ disputes: Type.Array(DisputeView) }, { $id: 'Disputes' });
const DisputeParams = Type.Object({ dispute_id: Type.String() });

const example = {
  id: '0190b8d2-7c1e-7a3b-9f00-0123456789ac',
  order_id: '0190b8d1-0000-7000-8000-0123456789ab',
  source: 'acquirer',
  host_dispute_id: 'DSP000000001',
  reason_code: '4837',
  currency: 'EUR',
  amount: 1995,
  state: 'open',
  deadline: '2026-12-15T06:00:00.000Z',
  stages: [
    { stage: 'chargeback', amount: 1995, reason_code: '4837', date: '2026-12-01', order_id: '0190b8d3-0000-7000-8000-0123456789ab' },
  ],
  evidence: [],
  created: '2026-12-01T06:00:00.000Z',
  modified: '2026-12-01T06:00:00.000Z',
};

/** Tender's extension: the disputes of the API key's project (docs/payouts.md "Disputes"). */
export const disputeRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/disputes/',
      {
        schema: {
          summary: "Extension: the project's disputes, newest first",
          description: "Chargebacks from the acquirer's settlement file (or test chargebacks), with their stages and state.",
          tags: ['payouts'],
          security: BasicAuth,
          response: { 200: answer('The disputes', Disputes, { disputes: [example] }), ...errorAnswers(401) },
        },
      },
      async (req) => listDisputes(ctx, req.project),
    );
    app.get(
      '/v1/disputes/:dispute_id/',
      {
        schema: {
          summary: 'Extension: one dispute with its stages and evidence',
          tags: ['payouts'],
          security: BasicAuth,
          params: DisputeParams,
          response: {
            200: answer('The dispute', DisputeView, { ...example, state: 'defended', defence: 'The customer signed for the parcel.' }),
            ...errorAnswers(401, 404),
          },
        },
      },
      async (req) => getDispute(ctx, req.project, req.params.dispute_id),
    );
  };
