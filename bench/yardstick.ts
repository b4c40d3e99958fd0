// The yardstick for bench/create-order.ts: the least a JSON API on PostgreSQL can do per request.
// A bare Fastify route that parses the JSON body and inserts it as one row, with the same pool size.
import Fastify from 'fastify';
import pg from 'pg';
import { randomUUID } from 'node:crypto';

export interface Yardstick {
  url: string;
  close(): Promise<void>;
}

export async function startYardstick(opts: { databaseUrl: string; schema: string; poolSize: number }): Promise<Yardstick> {
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize, options: `-c search_path=${opts.schema}` });
  await pool.query('CREATE TABLE IF NOT EXISTS yardstick_rows (id uuid PRIMARY KEY, body jsonb NOT NULL, created timestamptz NOT NULL)');
  const app = Fastify({ logger: false });
  app.post('/rows', async (req, reply) => {
    const id = randomUUID();
    await pool.query('INSERT INTO yardstick_rows (id, body, created) VALUES ($1, $2, $3)', [id, JSON.stringify(req.body), new Date()]);
    return reply.code(201).send({ id });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/rows`,
    async close() {
      await app.close();
      await pool.end();
    },
  };
}
