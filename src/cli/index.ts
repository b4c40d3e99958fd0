import { Command as Program, Option } from 'commander';
import { loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { openStore } from '../store/db/open.ts';
import { readLock } from '../store/db/lock.ts';
import { commands, type AdminAnswer } from './commands.ts';
import { buildContext, startService } from '../main.ts';
import { ensureFirstProject, hasNoProject } from './first-run.ts';
import { DomainError } from '../domain/errors.ts';
import { seedCli } from './seed.ts';
import type { rotateKey } from '../services/platform/tenancy.ts';
import type { createBoundProject } from '../services/payments/acquirer-link.ts';
import type { rotateWebhookSecret, setProjectWebhookUrl } from '../services/webhooks/endpoints.ts';
import type { rewrapDataKeys } from '../services/platform/crypto-envelope.ts';
import type { checkLedger } from '../services/payments/ledger-check.ts';
import type { createUser } from '../services/portal/users.ts';
import { acquirerCommands, acquirerHostCommand, bindingOptions, threeDsOptions } from './acquirer.ts';
import { dsHostCommand } from './ds-host.ts';
import { payoutsCommands } from './payouts.ts';
import { disputesCommands } from './disputes.ts';
import { riskCommands } from './risk.ts';

const program = new Program('tender').description('Tender payment service');

/** What a command's use case answers (commands.ts). */
type Answer<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

/**
 * Runs an admin command on the store, or through the server that holds the embedded store; print
 * shows its result (R, what the command answers: commands.ts) unless --json.
 */
async function run<R>(name: string, args: Record<string, unknown>, json: boolean, print: (r: R) => string) {
  const config = loadConfig();
  let result: unknown;
  const holder = config.databaseUrl ? undefined : readLock(config.dataDir);
  if (holder) {
    const res = await fetch(`${holder.url}/_admin/cli`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${holder.token}` },
      body: JSON.stringify({ command: name, args }),
    }).catch(() => {
      throw new Error(
        `the Tender server (pid ${holder.pid}) holds ${config.dataDir} but does not answer at ${holder.url}; stop it and retry`,
      );
    });
    const body = (await res.json()) as AdminAnswer<R>;
    if (!res.ok)
      throw Object.assign(new Error(body?.error?.value ?? `server answered ${res.status}`), {
        status: res.status,
        type: body?.error?.type,
      });
    result = body.result;
  } else {
    const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
    const db = await openStore(config);
    try {
      result = await commands[name](buildContext({ db, config, log }), args);
    } finally {
      await db.close();
    }
  }
  process.stdout.write((json ? JSON.stringify(result) : print(result as R)) + '\n');
}

/**
 * One line on stderr. Exit 2 when the command names something that does not exist (an unknown
 * id: NotFound) or is itself unknown, 1 for every other failure.
 */
const fail = (err: unknown) => {
  const notFound = err instanceof DomainError ? err.kind === 'not_found' : (err as { status?: number }).status === 404;
  const msg = err instanceof DomainError ? `${err.type}: ${err.message}` : (err as Error).message;
  process.stderr.write(`tender: ${msg}\n`);
  process.exit(notFound ? 2 : 1);
};

/** The first word that is not a command where one is expected (`tender foo`, `tender project foo`), if any. */
export function unknownCommand(root: Program, argv: string[]): string | undefined {
  let cmd = root;
  for (const word of argv) {
    if (word.startsWith('-')) return undefined; // options from here on: commander checks them
    const subs = cmd.commands;
    if (!subs.length) return undefined;
    const next = subs.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next) return word === 'help' ? undefined : [...argv.slice(0, argv.indexOf(word)), word].join(' ');
    cmd = next;
  }
  return undefined;
}

program
  .command('serve', { isDefault: true })
  .description('serve the API, vault, wallet-b token service and portal; on a new embedded store, creates a test project')
  .action(async () => {
    const svc = await startService({ adminCommands: commands });
    const first = await ensureFirstProject(svc.ctx);
    const c = svc.ctx.config;
    const lines = [
      `Tender is running on ${svc.ctx.db.kind === 'pglite' ? `embedded PGlite (${c.dataDir})` : 'PostgreSQL'}`,
      `  API            ${c.publicBaseUrl}/v1/`,
      `  Vault          ${c.vaultUrl}/v1/cards/`,
      `  Wallet-b token ${c.walletBTokenUrl}/tokens/`,
      `  Portal         ${c.portalUrl}/`,
      `  API docs       ${c.publicBaseUrl}/docs`,
    ];
    if (first) {
      lines.push(
        '',
        'Created a test project on first run:',
        `  merchant_id ${first.merchant_id}`,
        `  project_id  ${first.project_id}`,
        `  API key     ${first.api_key}`,
        '    (shown once: keep it; `npx tender key rotate --project ID` makes a new API key)',
        ...(first.webhook_secret
          ? [
              `  webhook secret ${first.webhook_secret}`,
              '    (shown once: keep it; `npx tender webhook-secret rotate --project ID` makes a new webhook secret)',
            ]
          : []),
        '',
        `Try: curl -u ${first.api_key}: ${c.publicBaseUrl}/v1/merchants/self/projects/self/`,
      );
      const u = first.portal_user;
      lines.push(
        '',
        'Sign in to the portal:',
        `  ${c.portalUrl}/sign-in`,
        `  email    ${u.email}`,
        `  password ${u.password}`,
        '  (shown once; `npx tender user create --merchant ID --email EMAIL` adds users)',
      );
    }
    if (!first && (await hasNoProject(svc.ctx)))
      lines.push(
        '',
        'No merchant yet. Create the first one and its portal owner:',
        '  npx tender project create --name NAME --mode live --json   (prints merchant_id, project_id, API key)',
        '  npx tender user create --merchant MERCHANT_ID --email EMAIL',
      );
    process.stdout.write(lines.join('\n') + '\n');
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await svc.close();
      process.exit(0);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });

program
  .command('migrate')
  .description('apply database migrations')
  .action(async () => {
    const config = loadConfig();
    if (!config.databaseUrl && readLock(config.dataDir)) {
      process.stdout.write('the running server applied migrations at start\n');
      return;
    }
    const db = await openStore(config);
    await db.close();
    process.stdout.write('migrations applied\n');
  });

const user = program.command('user').description('manage merchant portal users');
user
  .command('create')
  .description('create a portal user; without --password-stdin a password is generated and shown once')
  .requiredOption('--merchant <id>', 'the merchant the user belongs to')
  .requiredOption('--email <email>', 'sign-in email address')
  .option('--password-stdin', 'read the password from standard input')
  .option('--json', 'print JSON')
  .action(async (o) => {
    const password = o.passwordStdin ? await readStdin() : undefined;
    await run<Answer<typeof createUser>>('user create', { merchant: o.merchant, email: o.email, password }, o.json, (r) =>
      [
        `user_id     ${r.user_id}`,
        `merchant_id ${r.merchant_id}`,
        `email       ${r.email}`,
        ...(r.password ? [`password    ${r.password}`, '(shown once: keep it)'] : []),
      ].join('\n'),
    ).catch(fail);
  });

/** Standard input as text, without its final line break. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

const project = program.command('project').description('manage projects');
threeDsOptions(project.command('create'))
  .description('create a project (a new merchant unless --merchant); prints its API key and webhook secret once')
  .requiredOption('--name <name>', 'project name')
  .addOption(new Option('--mode <mode>', 'test or live').choices(['test', 'live']).default('test'))
  .option('--merchant <id>', 'add the project to an existing merchant')
  .option('--acquirer <url>', 'live projects: the acquiring host, iso8583://HOST:PORT or iso8583s://HOST:PORT')
  .option('--terminal-id <id>', 'live projects: the terminal id at the acquirer (field 41)')
  .option('--card-acceptor-id <id>', 'live projects: the card acceptor (merchant) id at the acquirer (field 42)')
  .option('--refuse-unauthenticated', 'live projects: refuse payments not authenticated by 3-D Secure')
  .option('--json', 'print JSON')
  .action((o) =>
    run<Answer<typeof createBoundProject>>(
      'project create',
      { name: o.name, mode: o.mode, merchant: o.merchant, ...bindingOptions(o) },
      o.json,
      (r) =>
        `merchant_id ${r.merchant_id}\nproject_id  ${r.project_id}\napi_key     ${r.api_key}` +
        (r.webhook_secret ? `\nwebhook_secret ${r.webhook_secret}` : '') +
        (r.acquirer
          ? `\nacquirer    ${r.acquirer.acquirer} terminal ${r.acquirer.terminal_id} card acceptor ${r.acquirer.card_acceptor_id}`
          : '') +
        (r.acquirer?.three_ds
          ? `\n3-D Secure  ${Object.entries(r.acquirer.three_ds.directory_servers)
              .map(([b, u]) => (b === '*' ? u : `${b}=${u}`))
              .join(',')}`
          : ''),
    ),
  );
project
  .command('set-webhook')
  .description("set the project's webhook URL, used for orders without their own webhook_url")
  .requiredOption('--project <id>', 'project id')
  .option('--url <url>', 'http(s) URL; omit it to clear')
  .option('--json', 'print JSON')
  .action((o) =>
    run<Answer<typeof setProjectWebhookUrl>>(
      'project set-webhook',
      { project: o.project, url: o.url },
      o.json,
      (r) => `project_id  ${r.project_id}\nwebhook_url ${r.webhook_url ?? '(none)'}`,
    ),
  );
project
  .command('methods')
  .description('set the payment methods the project offers: names separated by commas (ideal,bancontact,credit-card), or all')
  .requiredOption('--project <id>', 'project id')
  .requiredOption('--methods <list>', 'method names separated by commas, or all')
  .option('--json', 'print JSON')
  .action((o) =>
    run(
      'project methods',
      { project: o.project, methods: o.methods },
      o.json,
      (r: { project_id: string; payment_methods: string[] }) =>
        `project_id      ${r.project_id}\npayment_methods ${r.payment_methods.join(', ')}`,
    ),
  );
project
  .command('list')
  .description('list every project with its id, mode and name')
  .option('--json', 'print JSON')
  .action((o) =>
    run('project list', {}, o.json, (r: Array<{ project_id: string; mode: string; name: string }>) =>
      r.map((p) => `${p.project_id}  ${p.mode}  ${p.name}`).join('\n'),
    ),
  );

program
  .command('key')
  .description('manage API keys')
  .command('rotate')
  .description('make a new API key for the project (shown once) and revoke its old keys')
  .requiredOption('--project <id>', 'project id')
  .option('--json', 'print JSON')
  .action((o) =>
    run<Answer<typeof rotateKey>>(
      'key rotate',
      { project: o.project },
      o.json,
      (r) => `project_id ${r.project_id}\napi_key    ${r.api_key}\n(the old key is revoked)`,
    ),
  );

payoutsCommands(program, run);
disputesCommands(program, run);
riskCommands(program, run, readStdin);

program
  .command('ledger')
  .description('money ledger tools')
  .command('check')
  .description('verify every money invariant of every order; exits 1 naming each violation')
  .option('--project <id>', 'only this project')
  .option('--json', 'print JSON')
  .action((o) =>
    // printed here rather than by --json so the exit code is set either way
    run<Answer<typeof checkLedger>>('ledger check', { project: o.project }, false, (r) => {
      if (!r.ok) process.exitCode = 1;
      if (o.json) return JSON.stringify(r);
      return r.ok
        ? `ledger check passed: ${r.transactions} authorizations, ${r.journals} journals, ${r.balances} merchant balances`
        : [`ledger check FAILED: ${r.violations.length} violation(s)`, ...r.violations.map((v: string) => `  - ${v}`)].join('\n');
    }),
  );

program
  .command('keys')
  .description('manage the master key of the card vault')
  .command('rewrap')
  .description(
    'wrap every project data key with the new master key in TENDER_NEW_MASTER_KEY too (no downtime); --prune drops the other wraps',
  )
  .option('--prune', 'keep only the wrap under the new key (once every node runs with it)')
  .option('--json', 'print JSON')
  .action((o) => {
    const key = process.env.TENDER_NEW_MASTER_KEY;
    if (!key) return fail(new Error('set TENDER_NEW_MASTER_KEY to the new master key (64 hex characters or base64 of 32 bytes)'));
    return run<Answer<typeof rewrapDataKeys>>(
      'keys rewrap',
      { new_master_key: key, prune: Boolean(o.prune) },
      o.json,
      (r) =>
        `data keys ${r.data_keys}: ${r.rewrapped} re-wrapped, ${r.already_wrapped} already wrapped, ${r.pruned} old wraps dropped` +
        `\nnew master key id ${r.new_master_key_id}` +
        (r.unreadable.length ? `\nnot readable with the current master key: ${r.unreadable.join(', ')}` : ''),
    );
  });

program
  .command('webhook-secret')
  .description('manage the webhook signing secret')
  .command('rotate')
  .description('make a new secret (shown once); the old one keeps signing beside it for 24 h')
  .requiredOption('--project <id>', 'project id')
  .option('--json', 'print JSON')
  .action((o) =>
    run<Answer<typeof rotateWebhookSecret>>(
      'webhook-secret rotate',
      { project: o.project },
      o.json,
      (r) =>
        `project_id     ${r.project_id}\nwebhook_secret ${r.webhook_secret}` +
        (r.previous_secret_expires ? `\n(the previous secret also signs until ${r.previous_secret_expires})` : ''),
    ),
  );

program
  .command('seed')
  .description('create N realistic orders of every kind in a project, fast (demos, search, benchmarks)')
  .requiredOption('--project <id>', 'project id')
  .requiredOption('--orders <n>', 'how many payment orders (capture, void, refund and chargeback orders come on top)')
  .option('--days <n>', 'spread them over this many days up to now', '365')
  .option('--json', 'print JSON')
  .action((o) => seedCli(o).catch(fail));

acquirerHostCommand(program, fail);
dsHostCommand(program, fail);
acquirerCommands(program, project, run);

export { program, run };

if (process.env.TENDER_CLI_NO_PARSE !== '1') {
  const unknown = unknownCommand(program, process.argv.slice(2));
  if (unknown) {
    process.stderr.write(`tender: unknown command '${unknown}' (tender --help lists the commands)\n`);
    process.exit(2);
  }
  program.parseAsync(process.argv).catch(fail);
}
