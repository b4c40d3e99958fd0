// The failover of `npm run test:cluster`: a pg_auto_failover formation (a monitor, a primary and
// a secondary with synchronous replication, Debian's postgresql-15-auto-failover), the primary
// killed under load. Tender nodes reach it by a multi-host connection string with
// target_session_attrs=read-write (store/hosts.ts), straight to PostgreSQL: PgBouncer names one
// host and would not follow the promotion.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import pg from 'pg';
import { PG_BIN, freePort, until } from './topology.ts';

export class Formation {
  readonly dir: string;
  readonly ports: { monitor: number; a: number; b: number } = { monitor: 0, a: 0, b: 0 };
  private readonly procs = new Map<string, ChildProcess>();
  private readonly env: NodeJS.ProcessEnv;

  constructor(base: string) {
    this.dir = join(base, 'autofailover');
    mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    if (userInfo().uid === 0) execFileSync('chown', ['postgres:postgres', this.dir]);
    this.env = {
      PATH: `${PG_BIN}:/usr/bin:/bin`,
      XDG_CONFIG_HOME: join(this.dir, 'config'),
      XDG_DATA_HOME: join(this.dir, 'data'),
      XDG_RUNTIME_DIR: join(this.dir, 'run'),
    };
  }

  /** The URL Tender is given: both nodes, the writable one wins. */
  get url() {
    return `postgres://postgres@127.0.0.1:${this.ports.a},127.0.0.1:${this.ports.b}/tender?target_session_attrs=read-write`;
  }
  private at = (port: number, db = 'tender') => `postgres://postgres@127.0.0.1:${port}/${db}`;
  private get monitorUri() {
    return `postgres://autoctl_node@127.0.0.1:${this.ports.monitor}/pg_auto_failover?sslmode=disable`;
  }

  /** pg_autoctl as the postgres user, in a process group of its own (so a kill takes its Postgres too). */
  private autoctl(name: string, args: string[]) {
    const envArgs = Object.entries(this.env).map(([k, v]) => `${k}=${v}`);
    const [cmd, a] =
      userInfo().uid === 0 ? ['runuser', ['-u', 'postgres', '--', 'env', ...envArgs, 'pg_autoctl', ...args]] : ['pg_autoctl', args];
    const proc = spawn(cmd, a, {
      cwd: this.dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: userInfo().uid === 0 ? process.env : { ...process.env, ...this.env },
    });
    const log = join(this.dir, `${name}.log`);
    proc.stdout!.on('data', (d) => writeFileSync(log, d, { flag: 'a' }));
    proc.stderr!.on('data', (d) => writeFileSync(log, d, { flag: 'a' }));
    this.procs.set(name, proc);
    return proc;
  }

  private async sql<T = Record<string, unknown>>(url: string, text: string): Promise<T[]> {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    c.on('error', () => {});
    await c.connect();
    try {
      return (await c.query(text)).rows as T[];
    } finally {
      await c.end().catch(() => {});
    }
  }

  private async states(): Promise<Array<{ nodename: string; reportedstate: string; goalstate: string }>> {
    return this.sql(
      this.at(this.ports.monitor, 'pg_auto_failover'),
      'SELECT nodename, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid',
    );
  }

  private node(name: string, port: number) {
    const pgdata = join(this.dir, name);
    // prettier-ignore
    return this.autoctl(name, ['create', 'postgres', '--pgdata', pgdata, '--pgport', String(port), '--hostname', '127.0.0.1', '--listen', '127.0.0.1',
      '--name', name, '--dbname', 'tender', '--monitor', this.monitorUri, '--auth', 'trust', '--no-ssl', '--pgctl', join(PG_BIN, 'pg_ctl'), '--run']);
  }

  async create() {
    this.ports.monitor = await freePort();
    this.ports.a = await freePort();
    this.ports.b = await freePort();
    // prettier-ignore
    this.autoctl('monitor', ['create', 'monitor', '--pgdata', join(this.dir, 'monitor'), '--pgport', String(this.ports.monitor), '--hostname', '127.0.0.1',
      '--auth', 'trust', '--no-ssl', '--pgctl', join(PG_BIN, 'pg_ctl'), '--run']);
    await until('the pg_auto_failover monitor', async () => (await this.states(), true), 60_000, 500);
    // notice a dead primary, and stop waiting for it to step down, in seconds rather than the default ~50 s
    const settings = {
      health_check_period: 1000,
      health_check_timeout: 1000,
      health_check_max_retries: 1,
      health_check_retry_delay: 500,
      node_considered_unhealthy_timeout: 3000,
      primary_demote_timeout: 3000,
    };
    for (const [k, v] of Object.entries(settings))
      await this.sql(this.at(this.ports.monitor, 'pg_auto_failover'), `ALTER SYSTEM SET pgautofailover.${k} = ${v}`);
    await this.sql(this.at(this.ports.monitor, 'pg_auto_failover'), 'SELECT pg_reload_conf()');
    this.node('a', this.ports.a);
    await until(
      'node a primary alone',
      async () => (await this.states()).some((s) => s.nodename === 'a' && ['single', 'wait_primary', 'primary'].includes(s.reportedstate)),
      90_000,
      500,
    );
    this.node('b', this.ports.b);
    // pg_basebackup waits for a spread checkpoint: ask for it at once
    await until(
      'node b secondary (synchronous)',
      async () => {
        await this.sql(this.at(this.ports.a), 'CHECKPOINT').catch(() => {});
        const s = await this.states();
        return (
          s.some((n) => n.nodename === 'b' && n.reportedstate === 'secondary') &&
          s.some((n) => n.nodename === 'a' && n.reportedstate === 'primary')
        );
      },
      120_000,
      1000,
    );
    const [{ names }] = await this.sql<{ names: string }>(
      this.at(this.ports.a),
      "SELECT current_setting('synchronous_standby_names') AS names",
    );
    return names;
  }

  /** SIGKILL the primary's keeper and its Postgres: the machine is gone. */
  killPrimary() {
    const proc = this.procs.get('a');
    if (proc?.pid) process.kill(-proc.pid, 'SIGKILL');
    const pid = join(this.dir, 'a', 'postmaster.pid');
    if (existsSync(pid)) {
      try {
        process.kill(Number(readFileSync(pid, 'utf8').split('\n')[0]), 'SIGKILL');
      } catch {
        /* gone with its group */
      }
    }
  }

  /** Is node b the primary now? */
  async promoted() {
    const [{ r }] = await this.sql<{ r: boolean }>(this.at(this.ports.b), 'SELECT pg_is_in_recovery() AS r');
    return !r;
  }

  async teardown() {
    // the servers first, by an immediate shutdown (SIGQUIT), which takes their children with them:
    // a SIGKILLed postmaster leaves its logger and background workers running, orphaned
    const postmasters: number[] = [];
    for (const name of ['monitor', 'a', 'b']) {
      const pid = join(this.dir, name, 'postmaster.pid');
      try {
        if (existsSync(pid)) postmasters.push(Number(readFileSync(pid, 'utf8').split('\n')[0]));
      } catch {
        /* gone */
      }
    }
    const signal = (pid: number, sig: NodeJS.Signals | 0) => {
      try {
        process.kill(pid, sig);
        return true;
      } catch {
        return false; // gone
      }
    };
    for (const pid of postmasters) signal(pid, 'SIGQUIT');
    for (let i = 0; i < 50 && postmasters.some((pid) => signal(pid, 0)); i++) await new Promise((r) => setTimeout(r, 100));
    for (const proc of this.procs.values()) if (proc.pid) signal(-proc.pid, 'SIGKILL');
    for (const pid of postmasters) signal(pid, 'SIGKILL');
    // pg_autoctl's servers keep their sockets in the system directory: a killed one leaves its files there
    for (const port of Object.values(this.ports)) {
      if (!port) continue;
      for (const f of [`.s.PGSQL.${port}`, `.s.PGSQL.${port}.lock`]) rmSync(join('/var/run/postgresql', f), { force: true });
    }
  }
}
