import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { BIN } from './cli.ts';
import type { DsJournalLine } from '../../src/acquirer/threeds/host/journal.ts';

/** `tender ds-host` as its own process on loopback, with its ports read from the line it prints. */
export interface DsHostProcess {
  child: ChildProcess;
  /** http://127.0.0.1:PORT (the directory server is at /ds) */
  url: string;
  /** one line of the admin protocol and its answer (one line) */
  admin(line: string): Promise<string>;
  /** the host's journal of messages in and out */
  journal(): Promise<DsJournalLine[]>;
  stop(): void;
}

export async function startDsHostProcess(args: string[] = []): Promise<DsHostProcess> {
  const child = spawn(process.execPath, [BIN, 'ds-host', '--port', '0', '--admin-port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'warn' },
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out);
    });
    child.once('exit', (code) => reject(new Error(`ds-host exited ${code}`)));
  });
  const m = /(https?:\/\/127\.0\.0\.1:\d+)\/ds \(admin 127\.0\.0\.1:(\d+)\)/.exec(line);
  assert.ok(m, line);
  const adminPort = Number(m[2]);
  const admin = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const s = net.connect(adminPort, '127.0.0.1');
      let got = '';
      s.on('data', (c) => {
        got += c.toString();
        if (got.includes('\n')) {
          s.destroy();
          resolve(got.trim());
        }
      });
      s.on('error', reject);
      s.write(text + '\n');
    });
  return {
    child,
    url: m[1],
    admin,
    journal: async () => JSON.parse(await admin('journal')) as DsJournalLine[],
    stop: () => void child.kill('SIGTERM'),
  };
}
