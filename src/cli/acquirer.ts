import { readFileSync } from 'node:fs';
import { Option, type Command as Program } from 'commander';
import { startHost } from '../acquirer/iso8583/host/server.ts';
import { applyFaultLine, noFaults } from '../acquirer/iso8583/host/faults.ts';
import { loadLayout } from '../acquirer/iso8583/layout.ts';

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
