import pg from 'pg';

/**
 * Multi-host connection strings, as libpq reads them and node-postgres (8.x) does not:
 * `postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write`. Connections go to the
 * first host that answers and, with read-write, accepts writes (not a standby); the choice is
 * kept until a connection fails, then made again. So after a failover (pg_auto_failover,
 * Patroni...) the pool finds the promoted server by itself: requests in between get the 503
 * a lost connection gets (store/db/db.ts), and a retry lands on the new primary.
 */
export interface HostList {
  hosts: Array<{ host: string; port: number }>;
  /** read-write: only a server that is not in recovery and not default read-only */
  readWrite: boolean;
  /** the URL with only this host and without target_session_attrs (the rest as given) */
  urlFor(h: { host: string; port: number }): string;
}

const MULTI = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/;

/** The hosts of a connection string; undefined for a plain single-host one (used as it is). */
export function parseHosts(url: string): HostList | undefined {
  const m = MULTI.exec(url);
  if (!m) return undefined;
  const [, scheme, user = '', hostPart, path = '', query = ''] = m;
  const params = new URLSearchParams(query.slice(1));
  const attrs = params.get('target_session_attrs');
  if (!hostPart.includes(',') && !attrs) return undefined;
  if (attrs && attrs !== 'read-write' && attrs !== 'any')
    throw new Error(`target_session_attrs=${attrs} is not supported: read-write or any`);
  params.delete('target_session_attrs');
  const hosts = hostPart.split(',').map((h) => {
    const [, host, port] = /^(\[[^\]]+\]|[^:]*)(?::(\d+))?$/.exec(h) ?? [];
    if (!host) throw new Error(`bad host in the connection string: ${h}`);
    return { host: host.replace(/^\[|\]$/g, ''), port: port ? Number(port) : 5432 };
  });
  const rest = params.toString();
  const at = (h: { host: string; port: number }) => `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`;
  return { hosts, readWrite: attrs === 'read-write', urlFor: (h) => `${scheme}${user}${at(h)}${path}${rest ? `?${rest}` : ''}` };
}

/** Does this connection accept writes? (not a standby, not default_transaction_read_only) */
async function writable(c: pg.Client): Promise<boolean> {
  const r = await c.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro");
  return r.rows[0]?.ro === 'off';
}

/** An error the store reads as a lost connection (a 503 with Retry-After): no host would do. */
function noHost(list: HostList, why: string) {
  return Object.assign(
    new Error(`no ${list.readWrite ? 'read-write ' : ''}server among ${list.hosts.map((h) => `${h.host}:${h.port}`).join(', ')}: ${why}`),
    { code: '57P03' },
  );
}

/**
 * A pg.Client class for pools of a multi-host connection string: each new connection goes to the
 * chosen host, checked writable when asked; a failure forgets the choice, so the next connection
 * tries the hosts again in order.
 */
export function multiHostClient(list: HostList): typeof pg.Client {
  let chosen: { host: string; port: number } | undefined;
  let choosing: Promise<{ host: string; port: number }> | undefined;

  const choose = async (base: pg.ClientConfig) => {
    let last = 'no host answered';
    for (const h of list.hosts) {
      const probe = new pg.Client({ ...base, connectionString: list.urlFor(h), connectionTimeoutMillis: 2000 });
      probe.on('error', () => {});
      try {
        await probe.connect();
        if (!list.readWrite || (await writable(probe))) return h;
        last = `${h.host}:${h.port} is read-only`;
      } catch (err) {
        last = `${h.host}:${h.port}: ${(err as Error).message}`;
      } finally {
        void probe.end().catch(() => {});
      }
    }
    throw noHost(list, last);
  };

  return class MultiHostClient extends pg.Client {
    private readonly base: pg.ClientConfig;
    constructor(config: pg.ClientConfig) {
      super({ ...config, connectionString: list.urlFor(list.hosts[0]) });
      this.base = config;
    }

    // pg-pool calls connect(callback); others await connect()
    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error) => void): void;
    override connect(callback?: (err: Error) => void): Promise<pg.Client> | void {
      const run = async (): Promise<pg.Client> => {
        if (!chosen) {
          choosing ??= choose(this.base).finally(() => (choosing = undefined));
          chosen = await choosing;
        }
        const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
        self.host = self.connectionParameters.host = chosen.host;
        self.port = self.connectionParameters.port = chosen.port;
        try {
          await super.connect();
          if (list.readWrite && !(await writable(this as pg.Client))) {
            void (this as pg.Client).end().catch(() => {});
            throw noHost(list, `${chosen.host}:${chosen.port} became read-only`);
          }
        } catch (err) {
          chosen = undefined;
          throw err;
        }
        // a connection that breaks later (the server died) makes the next one choose again
        this.on('error', () => (chosen = undefined));
        return this as pg.Client;
      };
      if (!callback) return run();
      run().then(() => callback(undefined as unknown as Error), callback);
    }
  };
}
