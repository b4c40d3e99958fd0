import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { isValidAmount } from '../../domain/currency.ts';
import { DomainError } from '../../domain/errors.ts';
import type { Ctx } from '../../services/platform/context.ts';
import { captureTransaction, voidTransaction, type CaptureInput } from '../../services/payments/captures.ts';
import { refundOrder } from '../../services/payments/refunds.ts';
import { settleOrder } from '../../services/payments/chargebacks.ts';
import { testChargeback, testReversal } from '../../services/disputes/disputes.ts';
import { answer, errorAnswers, OrderIdParams, TransactionParams } from '../../domain/schemas/common.ts';
import { orderExample, paidOrderExample, partialVoidExample, refundExample } from '../../domain/schemas/examples.ts';
import { OrderView } from '../../domain/schemas/order.ts';
import { BasicAuth } from '../auth.ts';

const errors = errorAnswers(400, 401, 403, 404, 409, 422);
/** The order a money movement creates, as these operations answer it. */
const movement = (what: string, kind: string, amount: number) =>
  answer(`The ${what} order that records the movement`, OrderView, {
    ...orderExample,
    id: '01a210f6-3c4d-7e5f-8a9b-0c1d2e3f4a5b',
    status: 'completed',
    amount,
    related_order_id: orderExample.id,
    transactions: [
      {
        ...orderExample.transactions[0],
        id: '01a210f6-3c4d-7e5f-8a9b-0c1d2e3f4a5c',
        status: 'completed',
        amount,
        credit_debit: kind,
        payment_method_details: {},
      },
    ],
  });
const strict = { additionalProperties: false } as const;
/**
 * "No body": nothing, or an empty JSON object. Checked by hand: a body schema would make the
 * body required, and SDKs post these without one.
 */
function checkNoBody(req: FastifyRequest) {
  const b = req.body as unknown;
  if (b === undefined || b === null) return;
  if (typeof b !== 'object' || Array.isArray(b)) throw new DomainError('ValidationError', 'this endpoint takes no body', 'body');
  const extra = Object.keys(b as object)[0];
  if (extra) throw new DomainError('ValidationError', `${extra} is not a known field`, extra);
}
/** An optional `{amount}` body (test endpoints): nothing, {} or a whole non-negative amount. */
async function optionalAmount(req: FastifyRequest) {
  checkNoBody({ body: omit(req.body, 'amount') } as FastifyRequest);
  const amount = (req.body as { amount?: unknown } | undefined)?.amount;
  if (amount !== undefined && !isValidAmount(amount))
    throw new DomainError('ValidationError', 'amount must be an integer from 0 to 2^53-1', 'amount');
}
/**
 * A capture's body: none (all that remains), or `order_lines` naming the order's lines (each an
 * object with a `merchant_order_line_id`; what they may take is checked against the order).
 * By hand, as for "no body": a body schema would make the body required.
 */
async function captureBody(req: FastifyRequest) {
  checkNoBody({ body: omit(req.body, 'order_lines') } as FastifyRequest);
  const lines = (req.body as { order_lines?: unknown } | undefined)?.order_lines;
  if (lines === undefined) return;
  if (!Array.isArray(lines) || lines.length === 0 || lines.length > 500)
    throw new DomainError('ValidationError', 'order_lines must be a list of 1 to 500 order lines', 'order_lines');
  for (const [i, l] of lines.entries())
    if (!l || typeof l !== 'object' || Array.isArray(l))
      throw new DomainError('ValidationError', `order_lines[${i}] must be an object`, `order_lines[${i}]`);
}
/** Fastify hooks are async or call done(): these are async. */
const noBody = async (req: FastifyRequest) => checkNoBody(req);
const omit = (b: unknown, k: string) =>
  b && typeof b === 'object' && !Array.isArray(b) ? Object.fromEntries(Object.entries(b).filter(([n]) => n !== k)) : b;

const Description = Type.String({ minLength: 1, maxLength: 1024 });

/**
 * SDKs differ on "no body": some send nothing, some `Content-Type: application/json` with an
 * empty body. Both are fine on these routes; anything else is parsed as usual.
 */
function tolerateEmptyJson(app: Parameters<FastifyPluginAsyncTypebox>[0]) {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) =>
    (body as string).trim() === '' ? done(null, undefined) : json(req, body as string, done),
  );
}

/** Captures, voids and refunds: each answers the new order that records the movement. */
export const operationRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    tolerateEmptyJson(app);
    const tags = ['captures, voids and refunds'];
    const base = '/v1/orders/:order_id/transactions/:transaction_id';

    app.post(
      `${base}/captures/`,
      {
        config: { callsAcquirer: true },
        schema: {
          tags,
          security: BasicAuth,
          summary: 'Capture a pre-authorization',
          description:
            'No body: captures all that remains of the authorization (after partial voids and earlier captures). ' +
            'With `{"order_lines": [{"merchant_order_line_id": "1", "quantity": 1}]}`: captures those order lines of the order ' +
            "(`quantity` defaults to all of the line not yet captured; other members, if sent, must be the order line's), " +
            'for what they cost; the rest stays capturable. Answers the capture order, which lists the lines it took.',
          params: TransactionParams,
          response: { 201: movement('capture', 'credit', 1995), ...errors },
        },
        preValidation: captureBody,
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(
            await captureTransaction(
              ctx,
              req.project,
              req.params.order_id,
              req.params.transaction_id,
              req.body as CaptureInput | undefined,
            ),
          ),
    );

    app.post(
      `${base}/voids/`,
      {
        config: { callsAcquirer: true },
        schema: {
          tags,
          security: BasicAuth,
          summary: 'Void a pre-authorization',
          description: 'Releases all that remains of the authorization. Answers the void order. No body.',
          params: TransactionParams,
          response: { 201: movement('void', 'debit', 1995), ...errors },
        },
        preValidation: noBody,
      },
      async (req, reply) => reply.code(201).send(await voidTransaction(ctx, req.project, req.params.order_id, req.params.transaction_id)),
    );

    app.post(
      `${base}/voids/amount/`,
      {
        config: { callsAcquirer: true },
        schema: {
          tags,
          security: BasicAuth,
          summary: 'Void part of a pre-authorization',
          description: 'Releases `amount`; the rest stays capturable. Answers the void order.',
          params: TransactionParams,
          body: Type.Object(
            {
              amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'minor units' }),
              description: Description,
            },
            { ...strict, examples: [partialVoidExample] },
          ),
          response: { 201: movement('void', 'debit', 500), ...errors },
        },
      },
      async (req, reply) =>
        reply.code(201).send(
          await voidTransaction(ctx, req.project, req.params.order_id, req.params.transaction_id, {
            amount: req.body.amount,
            description: req.body.description,
          }),
        ),
    );

    app.post(
      '/v1/orders/:order_id/refunds/',
      {
        config: { callsAcquirer: true },
        schema: {
          tags,
          security: BasicAuth,
          summary: 'Refund captured money',
          description: 'Refunds part or all of the captured amount not yet refunded or charged back. Answers the refund order.',
          params: OrderIdParams,
          body: Type.Object(
            {
              amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'minor units' }),
              description: Type.Optional(Description),
              order_lines: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 500 })),
            },
            { ...strict, examples: [refundExample] },
          ),
          response: { 201: movement('refund', 'debit', 995), ...errors },
        },
      },
      async (req, reply) => {
        return reply.code(201).send(await refundOrder(ctx, req.project, req.params.order_id, req.body));
      },
    );
  };

/** Test projects simulate the issuer and the acquirer's settlement with these. */
export const operationTestRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    tolerateEmptyJson(app);
    const tags = ['test'];

    // A chargeback and its reversal: the same request, money moving the other way.
    const disputes = [
      {
        path: '/v1/test/orders/:order_id/chargeback/',
        summary: 'Simulate a chargeback',
        description:
          'The issuer takes back `amount` (default: all captured money not yet refunded or charged back). Answers the chargeback order.',
        response: movement('chargeback', 'debit', 1995),
        run: testChargeback,
      },
      {
        path: '/v1/test/orders/:order_id/reversal/',
        summary: 'Simulate a chargeback reversal',
        description:
          'The merchant won the dispute: `amount` (default: all that is charged back) is credited again. Answers the reversal order.',
        response: movement('chargeback reversal', 'credit', 1995),
        run: testReversal,
      },
    ];
    for (const d of disputes)
      app.post(
        d.path,
        {
          schema: {
            tags,
            security: BasicAuth,
            summary: d.summary,
            description: d.description,
            params: OrderIdParams,
            response: { 201: d.response, ...errors },
          },
          preValidation: optionalAmount,
        },
        async (req, reply) =>
          reply.code(201).send(await d.run(ctx, req.project, req.params.order_id, (req.body as { amount?: number } | undefined)?.amount)),
      );

    app.post(
      '/v1/test/orders/:order_id/settle/',
      {
        schema: {
          tags,
          security: BasicAuth,
          summary: 'Simulate settlement',
          description: 'Settles the money of the order and of the orders created from it. Answers the order.',
          params: OrderIdParams,
          response: {
            200: answer('The order, its money settled', OrderView, {
              ...paidOrderExample,
              transactions: paidOrderExample.transactions.map((t) => ({ ...t, settled: true })),
            }),
            ...errors,
          },
        },
        preValidation: noBody,
      },
      async (req) => settleOrder(ctx, req.project, req.params.order_id),
    );
  };
