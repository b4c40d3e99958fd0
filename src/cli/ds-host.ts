import { readFileSync } from 'node:fs';
import { Option, type Command as Program } from 'commander';
import { applyDsFaultLine, startDsHost } from '../acquirer/threeds/host/server.ts';

/**
 * `tender ds-host`: a 3-D Secure directory server with its issuers' ACS (docs/three-d-secure.md
 * "ds-host") as its own process, beside `tender acquirer-host`, for tests and demos of live
 * projects' 3-D Secure.
 */
export function dsHostCommand(program: Program, fail: (err: unknown) => void) {
  program
    .command('ds-host')
    .description('run the simulated EMV 3-D Secure directory server and ACS (live projects bind it with --directory-server URL/ds)')
    .requiredOption('--port <port>', 'HTTP(S) port (0: any free port)')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--admin-port <port>', 'port of the admin line protocol (fault switches, stats, journal)')
    .option('--public-url <url>', 'the URL browsers reach the ACS at (default: http(s)://HOST:PORT)')
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM)')
    .option('--tls-key <file>', 'the private key of --tls-cert (PEM)')
    .option('--client-ca <file>', 'require client certificates signed by this CA (mutual TLS, PEM)')
    .addOption(new Option('--fault <switch...>', 'fault switches at start, e.g. "no-answer=1" "malformed=1" "delay=500"'))
    .action(async (o) => {
      try {
        if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new Error('--tls-cert and --tls-key go together');
        if (o.clientCa && !o.tlsCert) throw new Error('--client-ca needs --tls-cert and --tls-key');
        const host = await startDsHost({
          port: Number(o.port),
          host: o.host,
          adminPort: o.adminPort !== undefined ? Number(o.adminPort) : undefined,
          publicUrl: o.publicUrl,
          tls: o.tlsCert
            ? { cert: readFileSync(o.tlsCert), key: readFileSync(o.tlsKey), ...(o.clientCa ? { ca: readFileSync(o.clientCa) } : {}) }
            : undefined,
          log: (line) => process.stderr.write(`ds-host: ${line}\n`),
        });
        for (const f of (o.fault as string[] | undefined) ?? []) {
          const reply = applyDsFaultLine(host.faults, f.replace('=', ' '));
          if (reply !== 'ok') {
            await host.close();
            throw new Error(`--fault ${f}: ${reply.replace(/^error /, '')}`);
          }
        }
        process.stdout.write(
          `directory server listening on ${host.url}/ds` +
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
