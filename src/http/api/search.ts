import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { nowFor } from '../../services/platform/context.ts';
import { MAX_SIZE, searchOrders, searchPageJson } from '../../services/reporting/search.ts';
import { orderReport } from '../../services/reporting/reports.ts';
import { MAX_QUERY_LENGTH, MAX_RESULT_WINDOW } from '../../domain/query.ts';
import { OrderView } from '../../domain/schemas/order.ts';
import { Enum, errorAnswers } from '../../domain/schemas/common.ts';
import { searchInputExample, searchResultExample } from '../../domain/schemas/examples.ts';
import { BasicAuth } from '../auth.ts';
import { clientGone } from '../gone.ts';

const SearchInput = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: MAX_QUERY_LENGTH,
      description: 'query language of docs/search.md; `*` matches every order',
    }),
    size: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_SIZE, description: `orders per page (default 10; CSV: without size, every matching order)` }),
    ),
    start: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_RESULT_WINDOW, description: `offset; start + size <= ${MAX_RESULT_WINDOW}` }),
    ),
    sort: Type.Optional(Type.String({ maxLength: 64, description: 'a field and asc or desc, such as "created desc" (the default)' })),
    search_after: Type.Optional(
      Type.Union([Type.String({ maxLength: 2048 }), Type.Integer()], {
        description: '"-1" for the first page, then the search_after of the previous response; not with start',
      }),
    ),
  },
  { additionalProperties: false, $id: 'SearchRequest', examples: [searchInputExample] },
);

const SearchResult = Type.Object(
  {
    total: Type.Integer({ description: `matching orders, counted up to ${MAX_RESULT_WINDOW}` }),
    total_relation: Enum(['eq', 'gte'], { description: `"gte" when there are more than ${MAX_RESULT_WINDOW}` }),
    orders: Type.Array(OrderView),
    search_after: Type.Union([Type.String(), Type.Null()], {
      description: 'pass as search_after to get the next page; null when the page is empty',
    }),
  },
  { $id: 'SearchResult' },
);

export const searchRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/search/orders/',
      {
        schema: {
          tags: ['search'],
          summary: 'Search orders; with ?format=csv, the CSV transaction report',
          security: BasicAuth,
          querystring: Type.Object({ format: Type.Optional(Enum(['csv'])) }, { additionalProperties: false }),
          body: SearchInput,
          response: {
            200: {
              description: 'JSON page of orders, or with format=csv a CSV report (text/csv) with one row per transaction',
              content: {
                'application/json': { schema: SearchResult, example: searchResultExample },
                'text/csv': {
                  schema: Type.String(),
                  example:
                    'order_id,transaction_id,status,currency,amount\n01a210f4-1cdf-7033-b931-b00aae79b723,01a210f4-1cdf-740c-915f-f6e0416ae9e8,completed,EUR,1995\n',
                },
              },
            },
            ...errorAnswers(400, 401, 429, 503),
          },
        },
      },
      async (req, reply) => {
        if (req.query.format !== 'csv') {
          const page = await searchOrders(ctx, req.project, req.body, clientGone(reply));
          return reply.type('application/json; charset=utf-8').send(await searchPageJson(page));
        }
        const report = orderReport(ctx, req.project, req.body, nowFor(req.project));
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${report.filename}"`)
          .header('cache-control', 'no-store')
          .send(report.stream as never); // a stream: the typed reply knows only the JSON shape
      },
    );
  };
