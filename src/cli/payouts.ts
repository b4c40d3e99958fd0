import { readFileSync, statSync } from 'node:fs';
import type { Command as Program } from 'commander';
import { MAX_BANK_FILE_BYTES } from '../domain/payouts/xml.ts';
import type { BankFileResult } from '../services/payouts/bankfiles.ts';
import type { Overview } from '../services/payouts/overview.ts';
import { formatMinor } from '../domain/currency.ts';

type Run = <T>(name: string, args: Record<string, unknown>, json: boolean, print: (r: T) => string) => Promise<void>;

/** A bank file's text, refused before it is read when it is larger than any Tender reads. */
function bankFileText(file: string): string {
  const size = statSync(file).size;
  if (size > MAX_BANK_FILE_BYTES)
    throw new Error(`${file} is ${size} bytes, more than the ${MAX_BANK_FILE_BYTES} of a bank file Tender reads`);
  return readFileSync(file, 'utf8');
}

function printBankFile(r: BankFileResult): string {
  const line = (a: { end_to_end_id: string; amount: number; currency: string; state: string; reason?: string }) =>
    `  ${a.end_to_end_id} ${a.currency} ${a.amount} cents ${a.state}${a.reason ? ` (${a.reason})` : ''}`;
  return [
    `${r.file} ${r.message_id}: ${r.booked.length} booked, ${r.returned.length} returned, ${r.rejected.length} rejected, ` +
      `${r.unchanged.length} unchanged, ${r.unmatched.length} not matched, ${r.ignored} ignored`,
    ...[...r.booked, ...r.returned, ...r.rejected].map(line),
    ...(r.unmatched.length
      ? ['not matched (nothing changed for these):', ...r.unmatched.map((u) => `  ${u.end_to_end_id ?? u.msg_id} ${u.reason}: ${u.detail}`)]
      : []),
  ].join('\n');
}

/** The operator's view as text: one section per question, amounts as decimals. */
function printOverview(r: Overview): string {
  const m = (n: number, c: string) => `${c} ${formatMinor(n, c)}`;
  const section = (title: string, lines: string[]) => [`${title}:`, ...(lines.length ? lines : ['  none'])];
  return [
    ...section(
      'balances (pending / available / reserved, open disputes)',
      r.balances.map(
        (b) =>
          `  ${b.merchant} ${b.merchant_id} ${b.mode}: ${m(b.pending, b.currency)} / ${m(b.available, b.currency)} / ${m(b.reserved, b.currency)}, ${b.open_disputes} open disputes`,
      ),
    ),
    ...section(
      'next payouts',
      r.next_payouts.map(
        (n) =>
          `  ${n.merchant} ${n.merchant_id} ${n.every} (${n.time_zone}): ${n.period ?? 'none'}, live ${m(n.live, 'EUR')}, test ${m(n.test, 'EUR')}` +
          `${n.minimum ? `, minimum ${m(n.minimum, 'EUR')}` : ''}${n.held_until ? `, held until ${n.held_until} (new IBAN)` : ''}`,
      ),
    ),
    ...section(
      'returned or rejected payouts',
      r.returned.map(
        (p) => `  ${p.merchant} ${p.id} ${p.mode} ${m(p.amount, p.currency)} ${p.state}${p.reason ? ` (${p.reason})` : ''} ${p.period}`,
      ),
    ),
    ...section(
      'negative available balances',
      r.negative.map((b) => `  ${b.merchant} ${b.merchant_id} ${b.mode}: ${m(b.available, b.currency)}`),
    ),
  ].join('\n');
}

/** `tender payouts schedule|run|booked|overview` (docs/payouts.md). */
export function payoutsCommands(program: Program, run: Run) {
  const payouts = program.command('payouts').description('merchant payouts by SEPA credit transfer (docs/payouts.md)');
  payouts
    .command('schedule')
    .description("set a merchant's payout schedule and account")
    .requiredOption('--merchant <id>', 'the merchant')
    .requiredOption('--iban <iban>', "the merchant's IBAN")
    .requiredOption('--name <name>', "the account holder's name")
    .requiredOption('--every <when>', 'daily, weekly:mon .. weekly:sun, or monthly:1 .. monthly:31')
    .option('--minimum <amount>', 'in euros: a smaller available balance waits for the next run')
    .option('--time-zone <zone>', "the merchant's IANA time zone the schedule follows (default UTC)")
    .option('--json', 'print JSON')
    .action((o) =>
      run<{ merchant_id: string; every: string; iban_changed: boolean }>(
        'payouts schedule',
        { merchant: o.merchant, iban: o.iban, name: o.name, every: o.every, minimum: o.minimum, time_zone: o.timeZone },
        Boolean(o.json),
        (r) =>
          `payout schedule of merchant ${r.merchant_id}: ${r.every}${r.iban_changed ? ' (new IBAN: the next payout is held for a day)' : ''}`,
      ),
    );
  payouts
    .command('run')
    .description('pay every merchant whose schedule is due, writing one SEPA file per mode')
    .option('--out <dir>', 'where the files go (default PAYOUT_DIR)')
    .option('--json', 'print JSON: the files written and the payouts in them')
    .action((o) =>
      run<{ files: Array<{ path: string; payouts: number; amount: number }>; payouts: unknown[] }>(
        'payouts run',
        { out: o.out },
        Boolean(o.json),
        (r) =>
          [
            `${r.payouts.length} payout(s), ${r.files.length} file(s)`,
            ...r.files.map((f) => `  ${f.path}: ${f.payouts} transfer(s), ${f.amount} cents`),
          ].join('\n'),
      ),
    );
  payouts
    .command('booked')
    .description(
      "read the bank's camt.053.001.08 statement (booked, returned) or pain.002.001.10 status report (rejected); exits 1 when a line matches no payout",
    )
    .argument('<file>', 'the statement or status report (XML)')
    .option('--json', 'print JSON')
    .action((file: string, o) =>
      // printed here rather than by --json so the exit code is set either way
      run('payouts booked', { text: bankFileText(file) }, false, (r: BankFileResult) => {
        if (r.unmatched.length) process.exitCode = 1;
        return o.json ? JSON.stringify(r) : printBankFile(r);
      }),
    );
  payouts
    .command('overview')
    .description("the operator's view across merchants: balances, next payouts, returned payouts, negative balances")
    .option('--json', 'print JSON')
    .action((o) => run<Overview>('payouts overview', {}, Boolean(o.json), printOverview));
}
