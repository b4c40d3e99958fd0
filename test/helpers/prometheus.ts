// Debian's prometheus (installed by .ci/run) in a temporary directory of its own, on a loopback
// port, scraping the given targets every second; read back through its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './cli.ts';
import { exited, waitFor } from './child-service.ts';

export interface Prometheus {
  url: string;
  /** the value of an instant query's single sample, or undefined when it has none */
  value(expr: string): Promise<number | undefined>;
  /** every sample of an instant query, as labels and value */
  samples(expr: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  /** polls until expr has a sample for which ok() holds (Prometheus scrapes every second) */
  until(expr: string, ok: (v: number) => boolean, what?: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts prometheus scraping `targets` (host:port, /metrics); rule files are loaded when given. */
export async function startPrometheus(targets: string[], ruleFiles: string[] = []): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'tender-prometheus-'));
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    ...(ruleFiles.length ? ['rule_files:', ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)] : []),
    'scrape_configs:',
    '  - job_name: tender',
    '    static_configs:',
    `      - targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}]`,
  ].join('\n');
  writeFileSync(join(dir, 'prometheus.yml'), config + '\n');
  const port = await freePort();
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'ignore'] },
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill('SIGTERM');
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('prometheus to be ready', async () => (await fetch(`${url}/-/ready`)).ok, 30_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const samples = async (expr: string) => {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
    if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error}`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };
  const value = async (expr: string) => {
    const s = await samples(expr);
    if (s.length > 1) throw new Error(`query ${expr}: ${s.length} samples, expected one`);
    return s[0]?.value;
  };
  return {
    url,
    samples,
    value,
    async until(expr, ok, what = expr) {
      let last: number | undefined;
      try {
        return await waitFor(
          what,
          async () => {
            last = await value(expr);
            return last !== undefined && ok(last) ? { v: last } : undefined;
          },
          30_000,
        ).then((r) => r.v);
      } catch {
        throw new Error(`${what}: last value ${last}`);
      }
    },
    stop,
  };
}
