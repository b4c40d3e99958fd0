import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { activeMethods, settingsOf } from '../../domain/project.ts';
import { answer, errorAnswers, Enum } from '../../domain/schemas/common.ts';
import { currenciesExample, projectExample } from '../../domain/schemas/examples.ts';
import { PAYMENT_METHODS } from '../../domain/payment-methods.ts';
import { BasicAuth } from '../auth.ts';

const ProjectView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    merchant_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    mode: Type.String({ enum: ['test', 'live'] }),
    status: Type.String({ enum: ['active-testing', 'active'] }),
    created: Type.String(),
    payment_methods: Type.Array(Enum(PAYMENT_METHODS), { description: 'the active payment methods' }),
  },
  { $id: 'Project' },
);

const Currencies = Type.Object({
  payment_methods: Type.Record(Type.String(), Type.Object({ currencies: Type.Array(Type.String()) })),
});

export const projectRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['project'];
    app.get(
      '/v1/merchants/self/projects/self/',
      {
        schema: {
          summary: 'The project of the API key',
          tags,
          security: BasicAuth,
          response: { 200: answer('The project', ProjectView, projectExample), ...errorAnswers(401) },
        },
      },
      async (req) => {
        const p = req.project;
        return {
          id: p.id,
          merchant_id: p.merchant_id,
          name: p.name,
          mode: p.mode,
          status: p.mode === 'test' ? 'active-testing' : 'active',
          created: new Date(p.created).toISOString().replace('Z', '+00:00'),
          payment_methods: activeMethods(settingsOf(p.settings)),
        };
      },
    );
    app.get(
      '/v1/merchants/self/projects/self/currencies/',
      {
        schema: {
          summary: 'Currencies per active payment method, and per alias of one (PAYMENT_METHOD_ALIASES)',
          tags,
          security: BasicAuth,
          response: {
            200: answer('The currencies each active payment method accepts', Currencies, currenciesExample),
            ...errorAnswers(401),
          },
        },
      },
      async (req) => {
        const s = settingsOf(req.project.settings);
        const payment_methods: Record<string, { currencies: string[] }> = {};
        for (const m of activeMethods(s)) payment_methods[m] = { currencies: [...s.payment_methods[m]!.currencies] };
        // an operator's alias is listed as the method it stands for, so clients that know only the alias find it
        for (const [alias, m] of Object.entries(ctx.config.paymentMethodAliases))
          if (payment_methods[m]) payment_methods[alias] = payment_methods[m];
        return { payment_methods };
      },
    );
  };
