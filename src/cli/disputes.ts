import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command as Program } from 'commander';
import { MAX_SETTLEMENT_FILE_BYTES } from '../domain/settlement-file.ts';
import type { ImportResult } from '../services/disputes/import.ts';

type Run = <T>(name: string, args: Record<string, unknown>, json: boolean, print: (r: T) => string) => Promise<void>;

function printImport(r: ImportResult): string {
  const line = (l: ImportResult['applied'][number]) =>
    `  line ${l.line}: ${l.stage} ${l.host_dispute_id} ${l.currency} ${l.amount} cents, order ${l.order_id}: ${l.state}`;
  return [
    `${r.lines} dispute line(s): ${r.applied.length} applied, ${r.unchanged.length} applied before, ${r.unmatched.length} not matched`,
    ...r.applied.map(line),
    ...(r.unmatched.length
      ? [
          'not matched (nothing changed for these):',
          ...r.unmatched.map((u) => `  line ${u.line}: ${u.host_dispute_id} ${u.reason}: ${u.detail}`),
        ]
      : []),
  ].join('\n');
}

/** `tender disputes import|list|evidence` (docs/payouts.md "Disputes"). */
export function disputesCommands(program: Program, run: Run) {
  const disputes = program.command('disputes').description('chargebacks from the acquirer and the merchants answers (docs/payouts.md)');
  disputes
    .command('import')
    .description("apply the dispute stages of an acquiring host's settlement file; exits 1 when a line matches no payment")
    .argument('<file>', 'settlement-YYYY-MM-DD.csv')
    .option('--json', 'print JSON')
    .action((file: string, o) => {
      const size = statSync(file).size;
      if (size > MAX_SETTLEMENT_FILE_BYTES) throw new Error(`${file} is ${size} bytes, more than a settlement file Tender reads`);
      return run('disputes import', { text: readFileSync(file, 'utf8') }, false, (r: ImportResult) => {
        if (r.unmatched.length) process.exitCode = 1;
        return o.json ? JSON.stringify(r) : printImport(r);
      });
    });
  disputes
    .command('list')
    .description('undecided disputes of every merchant (open or defended), the nearest deadline first')
    .option('--json', 'print JSON')
    .action((o) =>
      run<Array<{ id: string; state: string; deadline: string; currency: string; amount: number; host_dispute_id: string | null }>>(
        'disputes list',
        {},
        Boolean(o.json),
        (r) =>
          r.length
            ? r
                .map((d) => `${d.id} ${d.state} due ${d.deadline} ${d.currency} ${d.amount} cents ${d.host_dispute_id ?? '(test)'}`)
                .join('\n')
            : 'no undecided disputes',
      ),
    );
  disputes
    .command('evidence')
    .description("write a defended dispute's text and files to DIR/ID/, to send on to the acquirer")
    .argument('<id>', 'the dispute')
    .requiredOption('--out <dir>', 'where to write')
    .option('--json', 'print JSON')
    .action((id: string, o) =>
      run<{ dir: string; files: string[] }>('disputes evidence', { id, out: resolve(o.out) }, Boolean(o.json), (r) =>
        [`wrote ${r.files.length} file(s) to ${r.dir}`, ...r.files.map((f) => `  ${f}`)].join('\n'),
      ),
    );
}
