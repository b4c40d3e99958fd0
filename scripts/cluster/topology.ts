// The machines of `npm run test:cluster`, all on 127.0.0.1 in one temporary directory: a
// PostgreSQL 15 primary and a streaming replica (run as the postgres user), PgBouncer 1.18 in
// transaction pooling mode, HAProxy 2.6 health-checking /readyz, and Tender nodes. Ports are
// whatever the kernel hands out, so two runs on one machine never meet. Everything started here
// is stopped by teardown(), also after a failure or Ctrl-C.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const ROOT = new URL('../../', import.meta.url).pathname;

/** A free TCP port on 127.0.0.1 (the kernel's choice). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, everyMs = 200): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Runs a command as the postgres user (PostgreSQL refuses to run as root), or as ourselves when we are not root. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return userInfo().uid === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export interface Node {
  n: number;
  port: number;
  url: string;
  proc?: ChildProcess;
  exited?: Promise<number | null>;
}

export class Topology {
  readonly dir: string;
  readonly procs = new Set<ChildProcess>();
  private readonly groups = new Set<ChildProcess>();
  readonly clusters: string[] = [];
  ports: Record<string, number> = {};
  nodes: Node[] = [];
  masterKey = randomBytes(32).toString('hex');
  apiKey = '';
  bouncerPid?: number;
  projectId = '';
  private torn = false;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'tender-cluster-'));
    chmodSync(this.dir, 0o755);
  }

  get primaryUrl() {
    return `postgres://postgres@127.0.0.1:${this.ports.primary}/tender`;
  }
  get replicaUrl() {
    return `postgres://postgres@127.0.0.1:${this.ports.replica}/tender`;
  }
  get bouncerUrl() {
    return `postgres://postgres@127.0.0.1:${this.ports.bouncer}/tender`;
  }
  get lbUrl() {
    return `http://127.0.0.1:${this.ports.haproxy}`;
  }

  /** A directory the postgres user owns. */
  private pgDir(name: string) {
    const d = join(this.dir, name);
    mkdirSync(d, { recursive: true, mode: 0o700 });
    if (userInfo().uid === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
      chownSync(d, uid, gid);
    }
    return d;
  }

  private run(cmd: string, args: string[]) {
    const [c, a] = asPostgres(cmd, args);
    execFileSync(c, a, { stdio: ['ignore', 'pipe', 'pipe'], cwd: this.dir });
  }

  private start(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, postgres = false): ChildProcess {
    const [c, a] = postgres ? asPostgres(cmd, args) : [cmd, args];
    // a group of its own: runuser's child (PgBouncer) goes with it at teardown
    const proc = spawn(c, a, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: postgres ? this.dir : ROOT, detached: postgres });
    if (postgres) this.groups.add(proc);
    const log = join(this.dir, `${name}.log`);
    proc.stdout!.on('data', (d) => writeFileSync(log, d, { flag: 'a' }));
    proc.stderr!.on('data', (d) => writeFileSync(log, d, { flag: 'a' }));
    this.procs.add(proc);
    proc.on('exit', () => this.procs.delete(proc));
    return proc;
  }

  logOf(name: string) {
    const f = join(this.dir, `${name}.log`);
    return existsSync(f) ? readFileSync(f, 'utf8') : '';
  }

  /** PostgreSQL 15 primary and a streaming replica of it. */
  async postgres() {
    this.ports.primary = await freePort();
    this.ports.replica = await freePort();
    const primary = this.pgDir('primary');
    const sockets = this.pgDir('sockets');
    this.run(join(PG_BIN, 'initdb'), ['-D', primary, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const conf = [
      `port = ${this.ports.primary}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${sockets}'`,
      'wal_level = replica',
      'max_wal_senders = 4',
      'hot_standby = on',
      'max_connections = 200',
      'shared_buffers = 64MB',
      // a test cluster on a shared machine: the scenarios kill Tender nodes, not the database host
      'fsync = off',
    ];
    writeFileSync(join(primary, 'postgresql.auto.conf'), conf.join('\n') + '\n');
    this.run(join(PG_BIN, 'pg_ctl'), ['-D', primary, '-l', join(primary, 'server.log'), '-w', 'start']);
    this.clusters.push(primary);
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${this.ports.primary}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE tender');
    await admin.end();
    const replica = this.pgDir('replica');
    this.run(join(PG_BIN, 'pg_basebackup'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.ports.primary),
      '-U',
      'postgres',
      '-D',
      replica,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
    writeFileSync(
      join(replica, 'postgresql.auto.conf'),
      readFileSync(join(replica, 'postgresql.auto.conf'), 'utf8').replace(`port = ${this.ports.primary}`, `port = ${this.ports.replica}`),
    );
    this.run(join(PG_BIN, 'pg_ctl'), ['-D', replica, '-l', join(replica, 'server.log'), '-w', 'start']);
    this.clusters.push(replica);
  }

  /** PgBouncer in transaction pooling mode in front of the primary; `*` forwards any database (the test suite's). */
  async pgbouncer() {
    this.ports.bouncer = await freePort();
    const d = this.pgDir('pgbouncer');
    writeFileSync(join(d, 'userlist.txt'), '"postgres" ""\n');
    const ini = [
      '[databases]',
      `* = host=127.0.0.1 port=${this.ports.primary}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${this.ports.bouncer}`,
      `unix_socket_dir = ${d}`,
      'auth_type = trust',
      `auth_file = ${join(d, 'userlist.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      'default_pool_size = 30',
      'ignore_startup_parameters = extra_float_digits',
      'server_reset_query =',
    ];
    writeFileSync(join(d, 'pgbouncer.ini'), ini.join('\n') + '\n');
    if (userInfo().uid === 0) execFileSync('chown', ['-R', 'postgres:postgres', d]);
    this.bouncerPid = this.start('pgbouncer', 'pgbouncer', [join(d, 'pgbouncer.ini')], process.env, true).pid;
    await until('PgBouncer', async () => {
      const c = new pg.Client({ connectionString: this.bouncerUrl });
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return true;
    });
  }

  /** HAProxy: round robin over the nodes, each checked on /readyz every 250 ms (out after 2 reds). */
  async haproxy(nodePorts: number[]) {
    this.ports.haproxy ??= await freePort();
    const cfg = [
      'global',
      '  maxconn 2000',
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 60s',
      '  timeout server 60s',
      '  option http-server-close',
      // a refused connection (a node just gone) is tried again on another node: the request never reached Tender
      '  retries 3',
      '  option redispatch 1',
      '  retry-on conn-failure empty-response',
      'frontend api',
      `  bind 127.0.0.1:${this.ports.haproxy}`,
      '  default_backend tender',
      'backend tender',
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      '  default-server inter 250ms fall 2 rise 2',
      ...nodePorts.map((p, i) => `  server n${i + 1} 127.0.0.1:${p} check`),
    ];
    // every node red (the database is gone): the API's own 503, not HAProxy's page, so clients retry as documented
    const body = JSON.stringify({
      error: { status: 503, type: 'ServiceUnavailable', value: 'no node is ready (the database is unavailable); retry later' },
    });
    const errorfile = join(this.dir, '503.http');
    writeFileSync(
      errorfile,
      `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\ncache-control: no-store\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    cfg.splice(cfg.indexOf('frontend api'), 0, `  errorfile 503 ${errorfile}`);
    const f = join(this.dir, 'haproxy.cfg');
    writeFileSync(f, cfg.join('\n') + '\n');
    this.start('haproxy', 'haproxy', ['-f', f, '-db'], process.env);
    await until('HAProxy', async () => (await fetch(`${this.lbUrl}/healthz`)).status === 200);
  }

  /** The environment every Tender node runs with. */
  nodeEnv(port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TENDER_RUN: 'src',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: this.lbUrl,
      DATABASE_URL: this.bouncerUrl,
      DATABASE_PREPARED_STATEMENTS: 'off',
      // PgBouncer (transaction mode) passes no startup options: the statement timeout belongs to the
      // pool's role there (docs/security.md), not to each session
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      DATABASE_PARALLEL_WORKERS: 'server',
      DATABASE_LISTEN_URL: this.primaryUrl,
      DATABASE_REPLICA_URL: this.replicaUrl,
      DATABASE_POOL_SIZE: '6',
      TENDER_MASTER_KEY: this.masterKey,
      TENDER_DATA_DIR: join(this.dir, `node-${port}`),
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_MS: '1500',
      SHUTDOWN_GRACE_MS: '10000',
      TENDER_WORKER_POLL_MS: '200',
      TENDER_JOB_LEASE_MS: '4000',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_INTERVAL_MS: '300',
      // the scenarios' webhook receiver listens on 127.0.0.1: a shared service refuses that by default
      WEBHOOK_PRIVATE_ADDRESSES: 'allow',
      LATE_DECLINE_MS: '1500',
      // the ISO 8583 scenario: a payment the killed node left in flight is recovered by another
      // node after 10 s instead of 35 (the link gives up after 3 s, Tender's wait after 6; a call
      // not sent within 2 s of its record is not sent at all: the send deadline)
      ISO8583_TIMEOUT_MS: '3000',
      ACQUIRER_TIMEOUT_MS: '6000',
      ACQUIRER_RECOVERY_MS: '10000',
      RATE_LIMIT_PER_MINUTE: '0',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '0',
      LIVE_REQUIRES_TLS: 'false',
      ...extra,
    };
  }

  /** Starts node n (1-based) and waits until it answers /readyz; on an empty database, makes the test project. */
  async startNode(node: Node, extra: Record<string, string> = {}) {
    const proc = this.start(`node${node.n}`, process.execPath, [join(ROOT, 'bin/tender.mjs'), 'serve'], this.nodeEnv(node.port, extra));
    node.proc = proc;
    let out = '';
    proc.stdout!.on('data', (d) => (out += d.toString()));
    node.exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
    await until(`node ${node.n}`, async () => (await fetch(`${node.url}/readyz`)).status === 200, 60_000);
    await until(`node ${node.n} output`, async () => out.includes('API docs'), 10_000);
    // on PostgreSQL, serve makes no merchant (an operator's database starts empty): the
    // scenarios make their test project as an operator would, with `tender project create`
    if (out.includes('No merchant yet')) this.createTestProject(this.nodeEnv(node.port, extra));
  }

  private createTestProject(env: NodeJS.ProcessEnv) {
    const args = [join(ROOT, 'bin/tender.mjs'), 'project', 'create', '--name', 'Cluster shop', '--mode', 'test', '--json'];
    const created = JSON.parse(execFileSync(process.execPath, args, { env, cwd: ROOT }).toString()) as {
      api_key: string;
      project_id: string;
    };
    [this.apiKey, this.projectId] = [created.api_key, created.project_id];
  }

  async nodesUp(count: number) {
    for (let n = 1; n <= count; n++) {
      const port = await freePort();
      this.nodes.push({ n, port, url: `http://127.0.0.1:${port}` });
    }
    // the first node migrates the database and makes the test project, alone
    for (const node of this.nodes) await this.startNode(node);
    if (!this.apiKey) throw new Error('no test project on the cluster');
  }

  /** `tender acquirer-host` (the simulated ISO 8583 acquiring host) with its settlement files and journal in `host/`. */
  async acquirerHost(): Promise<{ url: string; adminPort: number; dir: string }> {
    this.ports.host = await freePort();
    this.ports.hostAdmin = await freePort();
    const dir = join(this.dir, 'host');
    const args = [
      'acquirer-host',
      '--port',
      String(this.ports.host),
      '--admin-port',
      String(this.ports.hostAdmin),
      '--settlement-dir',
      dir,
    ];
    this.start('acquirer-host', process.execPath, [join(ROOT, 'bin/tender.mjs'), ...args], { ...process.env, TENDER_RUN: 'src' });
    await until('the acquiring host', async () => this.logOf('acquirer-host').includes('listening on'), 60_000);
    return { url: `iso8583://127.0.0.1:${this.ports.host}`, adminPort: this.ports.hostAdmin, dir };
  }

  /** SIGTERM: the graceful stop. */
  async stopNode(node: Node) {
    node.proc?.kill('SIGTERM');
    const code = await node.exited;
    node.proc = undefined;
    return code;
  }

  killNode(node: Node) {
    node.proc?.kill('SIGKILL');
    node.proc = undefined;
  }

  async teardown() {
    if (this.torn) return;
    this.torn = true;
    for (const p of this.groups) {
      try {
        if (p.pid) process.kill(-p.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    for (const p of this.procs) p.kill('SIGKILL');
    for (const c of [...this.clusters].reverse()) {
      try {
        this.run(join(PG_BIN, 'pg_ctl'), ['-D', c, '-m', 'immediate', '-w', 'stop']);
      } catch {
        /* already down */
      }
    }
    if (!process.env.KEEP_CLUSTER_DIR) rmSync(this.dir, { recursive: true, force: true });
  }
}
