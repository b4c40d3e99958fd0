import type { FastifyPluginAsync } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import type { Ctx } from '../services/platform/context.ts';
import { DomainError } from '../domain/errors.ts';
import { MAX_BANK_FILE_BYTES } from '../domain/payouts/xml.ts';

/** An administrative command (the CLI's table, handed to startService by the CLI). */
export type AdminCommand = (ctx: Ctx, args: Record<string, unknown>) => Promise<unknown>;

/**
 * Lets `npx tender ...` work while this process holds the embedded store. Bound to a random
 * token that only the data directory's owner can read (tender.lock, mode 0600).
 */
export const adminRoutes =
  (ctx: Ctx, token: string, commands: Record<string, AdminCommand>): FastifyPluginAsync =>
  async (app) => {
    // a bank file travels in the args (`tender payouts booked`), or a settlement file (`tender disputes import`, as large): up to its limit, JSON-escaped
    const bodyLimit = 3 * MAX_BANK_FILE_BYTES;
    app.post<{ Body: { command: string; args: Record<string, unknown> } }>(
      '/_admin/cli',
      { schema: { hide: true }, bodyLimit },
      async (req) => {
        const given = Buffer.from(String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
        const want = Buffer.from(token);
        if (given.length !== want.length || !timingSafeEqual(given, want)) throw new DomainError('Unauthorized', 'admin token required');
        const command = Object.hasOwn(commands, req.body?.command) ? commands[req.body.command] : undefined;
        if (!command) throw new DomainError('NotFound', `unknown command ${req.body?.command}`);
        return { result: await command(ctx, req.body.args ?? {}) };
      },
    );
  };
