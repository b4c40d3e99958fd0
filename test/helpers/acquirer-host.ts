import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { BIN } from './cli.ts';

/** `tender acquirer-host` as its own process on loopback, with its ports read from the line it prints. */
export interface HostProcess {
  child: ChildProcess;
  port: number;
  adminPort: number;
  /** iso8583://127.0.0.1:PORT */
  url: string;
  /** one line of the admin protocol (fault switches, stats) and its answer */
  admin(line: string): Promise<string>;
  stop(): void;
}

/** `port`: a fixed one, to start the host again where the links look for it after a kill. */
export async function startHostProcess(settlementDir: string, args: string[] = [], port = 0): Promise<HostProcess> {
  const child = spawn(
    process.execPath,
    [BIN, 'acquirer-host', '--port', String(port), '--admin-port', '0', '--settlement-dir', settlementDir, ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'warn' },
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out);
    });
    child.once('exit', (code) => reject(new Error(`acquirer-host exited ${code}`)));
  });
  const m = /iso8583:\/\/127\.0\.0\.1:(\d+) \(admin 127\.0\.0\.1:(\d+)\)/.exec(line);
  assert.ok(m, line);
  port = Number(m[1]);
  const adminPort = Number(m[2]);
  return {
    child,
    port,
    adminPort,
    url: `iso8583://127.0.0.1:${port}`,
    async admin(text: string) {
      const s = net.connect(adminPort, '127.0.0.1');
      s.write(text + '\n');
      const reply = await new Promise<string>((r) => s.once('data', (c) => r(c.toString().trim())));
      s.destroy();
      return reply;
    },
    stop: () => void child.kill('SIGTERM'),
  };
}
