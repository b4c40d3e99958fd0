import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command as Program } from 'commander';
import { startHost } from '../acquirer/iso8583/host/server.ts';
import { applyFaultLine, noFaults } from '../acquirer/iso8583/host/faults.ts';
import { loadLayout } from '../acquirer/iso8583/layout.ts';
import type { AcquirerBindingInput } from '../services/payments/acquirer-link.ts';

/**
 * `tender acquirer-host`: the simulated acquiring host (docs/acquirer-iso8583.md) as its own
 * process, for tests, benchmarks and demos of live projects.
 */
export function acquirerHostCommand(program: Program, fail: (err: unknown) => void) {
  program
    .command('acquirer-host')
    .description('run the simulated ISO 8583 acquiring host (live projects connect to it with iso8583://HOST:PORT)')
    .requiredOption('--port <port>', 'TCP port of the link (0: any free port)')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--admin-port <port>', 'port of the admin line protocol (fault switches, stats)')
    .option('--settlement-dir <dir>', 'write settlement-YYYY-MM-DD.csv files here')
    .option('--hold-days <n>', 'days an authorization is held before it lapses', '7')
    .option('--layout <file>', 'JSON overrides of the ISO 8583:1987 field layout (a processor variant)')
    .option('--tls-cert <file>', 'serve TLS (iso8583s://) with this certificate (PEM)')
    .option('--tls-key <file>', 'the private key of --tls-cert (PEM)')
    .addOption(new Option('--fault <switch...>', 'fault switches at start, e.g. "delay=500" "drop=2" "refuse-sign-on=on"'))
    .action(async (o) => {
      try {
        const faults = noFaults();
        for (const f of (o.fault as string[] | undefined) ?? []) {
          const reply = applyFaultLine(faults, f.replace('=', ' '));
          if (reply !== 'ok') throw new Error(`--fault ${f}: ${reply.replace(/^error /, '')}`);
        }
        if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new Error('--tls-cert and --tls-key go together');
        const host = await startHost({
          port: Number(o.port),
          host: o.host,
          adminPort: o.adminPort !== undefined ? Number(o.adminPort) : undefined,
          settlementDir: o.settlementDir,
          holdMs: Number(o.holdDays) * 86_400_000,
          faults,
          layout: o.layout ? loadLayout(readFileSync(o.layout, 'utf8')) : undefined,
          tls: o.tlsCert ? { cert: readFileSync(o.tlsCert), key: readFileSync(o.tlsKey) } : undefined,
          log: (line) => process.stderr.write(`acquirer-host: ${line}\n`),
        });
        const scheme = o.tlsCert ? 'iso8583s' : 'iso8583';
        process.stdout.write(
          `acquirer host listening on ${scheme}://${o.host}:${host.port}` +
            (host.adminPort !== undefined ? ` (admin ${o.host}:${host.adminPort})` : '') +
            '\n',
        );
        const stop = () => host.close().then(() => process.exit(0));
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      } catch (err) {
        fail(err);
      }
    });
}

type BindingFlags = AcquirerBindingInput;

/** The 3-D Secure options of a binding (docs/three-d-secure.md), on `project create` and `project set-acquirer`. */
export const threeDsOptions = (c: Program) =>
  c
    .option('--directory-server <url>', 'EMV 3-D Secure: the directory server (one URL, or visa=URL,mastercard=URL)')
    .option('--acquirer-bin <bin>', 'EMV 3-D Secure: the acquirer BIN the schemes gave the acquirer')
    .option('--mcc <code>', 'EMV 3-D Secure: the merchant category code (4 digits)')
    .option('--merchant-country <alpha2>', "EMV 3-D Secure: the merchant's country (sets the project's merchant_country)")
    .option('--requestor-id <id>', 'EMV 3-D Secure: the 3DS Requestor id the DS knows (default: the project id)')
    .option('--requestor-name <name>', 'EMV 3-D Secure: the 3DS Requestor name (default: the project name)')
    .option('--ds-client-cert <file>', 'EMV 3-D Secure: client certificate for mutual TLS with the DS (PEM, on every node)')
    .option('--ds-client-key <file>', 'the private key of --ds-client-cert (PEM, on every node)')
    .option('--ds-ca <file>', "the CA of the DS's server certificate (PEM, on every node)");

/** The binding flags as the admin commands take them. */
export const bindingOptions = (o: BindingFlags) => ({
  acquirer: o.acquirer,
  terminal_id: o.terminalId,
  card_acceptor_id: o.cardAcceptorId,
  refuse_unauthenticated: o.refuseUnauthenticated === true,
  directory_server: o.directoryServer,
  acquirer_bin: o.acquirerBin,
  mcc: o.mcc,
  merchant_country: o.merchantCountry,
  requestor_id: o.requestorId,
  requestor_name: o.requestorName,
  ds_client_cert: o.dsClientCert && resolve(o.dsClientCert),
  ds_client_key: o.dsClientKey && resolve(o.dsClientKey),
  ds_ca: o.dsCa && resolve(o.dsCa),
});

type Run = <T>(name: string, args: Record<string, unknown>, json: boolean, print: (r: T) => string) => Promise<void>;

interface Row {
  terminal: string;
  rrn: string;
  type: string;
  currency: string;
  host_amount: number;
  tender_amount: number;
}
interface Reconciliation {
  ok: boolean;
  days: string[];
  matches: Row[];
  host_only: Row[];
  tender_only: Row[];
  amount_differences: Row[];
  cancelled: number;
}

/** `project set-acquirer` and `reconcile`. */
export function acquirerCommands(program: Program, project: Program, run: Run) {
  threeDsOptions(project.command('set-acquirer'))
    .description('bind a live project to an acquiring host, or change its binding')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--acquirer <url>', 'iso8583://HOST:PORT or iso8583s://HOST:PORT')
    .requiredOption('--terminal-id <id>', 'the terminal id at the acquirer (field 41)')
    .requiredOption('--card-acceptor-id <id>', 'the card acceptor id at the acquirer (field 42)')
    .option('--refuse-unauthenticated', 'refuse payments not authenticated by 3-D Secure')
    .option('--json', 'print JSON')
    .action((o) =>
      run('project set-acquirer', { project: o.project, ...bindingOptions(o) }, o.json, (r: Record<string, string>) =>
        [
          `project_id       ${r.project_id}`,
          `acquirer         ${r.acquirer}`,
          `terminal_id      ${r.terminal_id}`,
          `card_acceptor_id ${r.card_acceptor_id}`,
        ].join('\n'),
      ),
    );

  program
    .command('reconcile')
    .description("match an acquiring host's settlement file against Tender; exits 1 on any mismatch")
    .argument('<file>', 'settlement-YYYY-MM-DD.csv')
    .option('--acquirer <url>', 'only Tender messages sent to this host')
    .option('--csv <out>', 'also write every row, with its result, to this CSV file')
    .option('--json', 'print JSON')
    .action((file: string, o) =>
      // printed here rather than by --json so the exit code is set either way
      run('reconcile', { text: readFileSync(file, 'utf8'), acquirer: o.acquirer }, false, (r: Reconciliation) => {
        if (!r.ok) process.exitCode = 1;
        const groups: [string, Row[]][] = [
          ['match', r.matches],
          ['host_only', r.host_only],
          ['tender_only', r.tender_only],
          ['amount_difference', r.amount_differences],
        ];
        if (o.csv) {
          const rows = groups.flatMap(([result, rows]) =>
            rows.map((x) => [result, x.terminal, x.rrn, x.type, x.currency, x.host_amount, x.tender_amount].join(',')),
          );
          writeFileSync(o.csv, ['result,terminal,rrn,type,currency,host_amount,tender_amount', ...rows].join('\n') + '\n');
        }
        if (o.json) return JSON.stringify(r);
        const show = (x: Row) => `  ${x.terminal} ${x.rrn} ${x.type} ${x.currency} host ${x.host_amount} tender ${x.tender_amount}`;
        return [
          `${r.ok ? 'reconciled' : 'MISMATCH'}: ${r.days.join(', ')}: ${r.matches.length} matched, ${r.cancelled} reversed on both sides`,
          ...groups
            .slice(1)
            .flatMap(([name, rows]) => (rows.length ? [`${name.replace('_', ' ')}: ${rows.length}`, ...rows.map(show)] : [])),
        ].join('\n');
      }),
    );
}
