import pg from 'pg';

/**
 * One statement sent with BEGIN before it and/or COMMIT after it, in one round trip: the
 * extended protocol lets a client send several statements' messages and one Sync, and the server
 * answers them in order. node-postgres sends one statement per Sync, so this is its Query with
 * the extra messages written beside the statement's own (docs/performance-cards.md "Pipelined
 * BEGIN and COMMIT"). The server stops at the first error and skips to the Sync: a statement that
 * fails is never committed, and a BEGIN that went with it leaves the transaction open and failed,
 * to be rolled back by the caller as usual.
 */
class PipelinedQuery extends (pg.Query as unknown as new (config: pg.QueryConfig & { queryMode?: 'extended' }) => PgQueryInternals) {
  /** command completions still to come from a BEGIN sent ahead (answered before the statement's) */
  private ahead: number;
  private answered = false;
  /** this submit sent the Parse of a named statement (see handleError) */
  private parsedNow = false;

  constructor(
    config: pg.QueryConfig,
    private readonly begin: boolean,
    private readonly commit: boolean,
  ) {
    // extended mode: the statement goes as Parse/Bind/Execute even without parameters, so that
    // prepare() below (and not the simple protocol's one Query message) sends it
    super({ ...config, queryMode: 'extended' });
    this.ahead = begin ? 1 : 0;
  }

  prepare(connection: PgConnection) {
    this.parsedNow = Boolean(this.name) && !this.hasBeenParsed(connection);
    if (this.begin) sendBare(connection, 'BEGIN');
    super.prepare(connection);
  }

  _getRows(connection: PgConnection, rows?: number) {
    connection.execute({ portal: this.portal, rows });
    if (this.commit) sendBare(connection, 'COMMIT');
    connection.sync();
  }

  handleCommandComplete(msg: unknown, connection: PgConnection) {
    if (this.ahead > 0) return void this.ahead--; // BEGIN's
    if (this.answered) return; // COMMIT's
    this.answered = true;
    super.handleCommandComplete(msg, connection);
  }

  handleError(err: Error, connection: PgConnection) {
    // The ParseComplete of the BEGIN sent ahead made the client take this statement's name as
    // parsed; when its own Parse then failed, forget it, so the next use parses it again.
    if (this.parsedNow && this.name) delete connection.parsedStatements[this.name];
    super.handleError(err, connection);
  }
}

/** Parse, Bind and Execute of a statement without parameters or rows, unnamed. */
function sendBare(connection: PgConnection, text: 'BEGIN' | 'COMMIT') {
  connection.parse({ text, name: '', types: [] });
  connection.bind({ statement: '', values: [] });
  connection.execute({});
}

/** Runs `sql` on a checked-out client with BEGIN before it and/or COMMIT after it, in one round trip. */
export function pipelined(client: pg.ClientBase, config: pg.QueryConfig, around: { begin: boolean; commit: boolean }): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const q = new PipelinedQuery(config, around.begin, around.commit);
    q.on('error', reject);
    q.on('end', (result: pg.QueryResult | pg.QueryResult[]) => resolve((Array.isArray(result) ? result[0] : result).rows));
    client.query(q as unknown as pg.Submittable);
  });
}

// The parts of node-postgres's Query and Connection used above (pg/lib/query.js, connection.js);
// its type definitions do not describe them.
interface PgConnection {
  parsedStatements: Record<string, string>;
  parse(query: { text: string; name: string; types: unknown[] }): void;
  bind(config: { statement: string; values: unknown[] }): void;
  execute(config: { portal?: string; rows?: number }): void;
  sync(): void;
}
interface PgQueryInternals {
  name?: string;
  portal: string;
  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'end', listener: (result: pg.QueryResult | pg.QueryResult[]) => void): void;
  hasBeenParsed(connection: PgConnection): boolean;
  prepare(connection: PgConnection): void;
  handleCommandComplete(msg: unknown, connection: PgConnection): void;
  handleError(err: Error, connection: PgConnection): void;
}
