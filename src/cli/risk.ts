import type { Command as Program } from 'commander';
import { Option } from 'commander';
import type { Ctx } from '../services/platform/context.ts';
import { addToList, removeFromList, showLists, type Entry, type Scope } from '../services/risk/lists.ts';
import { LIST_KINDS, LISTS } from '../domain/risk/lists.ts';
import { invalid } from '../domain/errors.ts';
import type { HoldRow } from '../store/risk/holds.ts';

type Run = <T>(name: string, args: Record<string, unknown>, json: boolean, print: (r: T) => string) => Promise<void>;
type Command = (ctx: Ctx, args: Record<string, unknown>) => Promise<unknown>;

/** A project's lists (--project), or the platform's (--platform): exactly one. */
function scopeOf(a: Record<string, unknown>): Scope {
  if (a.platform === true && a.project === undefined) return 'platform';
  if (a.platform !== true && typeof a.project === 'string') return { project: a.project };
  throw invalid('project', 'give either --project ID or --platform');
}

/** `risk list add|remove|show`, as the CLI and the admin endpoint run them (cli/commands.ts). */
export const riskTable: Record<string, Command> = {
  'risk list add': (ctx, a) =>
    addToList(ctx, scopeOf(a), { list: a.list, kind: a.kind, value: a.value, expires_at: a.expires, note: a.note }, 'cli'),
  'risk list remove': (ctx, a) => removeFromList(ctx, scopeOf(a), a.id, 'cli'),
  'risk list show': (ctx, a) => showLists(ctx, scopeOf(a)),
};

const holdLine = (h: HoldRow) => `${h.project_id} held since ${new Date(h.created).toISOString()}: ${h.reason}`;
const until = (e: Entry) => (e.expires_at ? `  ${e.expired ? 'expired' : 'expires'} ${e.expires_at}` : '');
const line = (e: Entry) => `${e.id}  ${e.list.padEnd(5)}  ${e.kind.padEnd(12)}  ${e.value}${until(e)}${e.note ? `  (${e.note})` : ''}`;

/**
 * `tender risk list add|remove|show` (docs/risk.md "Lists") and `tender risk hold list|lift`
 * (docs/risk.md "The platform hold", docs/operations.md).
 */
export function riskCommands(program: Program, run: Run, readStdin: () => Promise<string>) {
  const risk = program.command('risk').description('card-testing risk controls (docs/risk.md)');
  holdCommands(risk, run);
  const list = risk.command('list').description('blocklists and allowlists of a project (--project) or of the whole platform (--platform)');
  const scoped = (c: Program) =>
    c
      .option('--project <id>', "the project's lists")
      .option('--platform', "the platform's lists, for every merchant")
      .option('--json', 'print JSON');
  const scope = (o: { project?: string; platform?: boolean }) => ({ project: o.project, platform: Boolean(o.platform) });

  scoped(
    list
      .command('add')
      .description('add an entry; a card number is read from standard input (never an argument) and kept only as its fingerprint')
      .addOption(new Option('--list <list>', 'block or allow').choices([...LISTS]).makeOptionMandatory())
      .addOption(new Option('--kind <kind>', 'what is listed').choices([...LIST_KINDS]).makeOptionMandatory())
      .option('--value <value>', 'the BIN (411111, or 411100-411199), country (NL), address or network (203.0.113.0/24), email or domain')
      .option('--expires <when>', 'when it stops matching: a duration (P30D, PT12H), a date (2027-01-31: to its end, UTC) or a date-time')
      .option('--note <text>', 'why it is listed (at most 200 characters)'),
  ).action(async (o) => {
    if (o.kind === 'card' && o.value !== undefined)
      throw new Error('a card number is read from standard input, never from the command line: echo the number | tender risk list add ...');
    const value = o.kind === 'card' ? await readStdin() : o.value;
    if (value === undefined) throw new Error(`--value is required for --kind ${o.kind}`);
    await run<{ added: boolean; entry: Entry }>(
      'risk list add',
      { ...scope(o), list: o.list, kind: o.kind, value, expires: o.expires, note: o.note },
      Boolean(o.json),
      (r) => (r.added ? `added ${line(r.entry)}` : `already listed ${line(r.entry)}`),
    );
  });

  scoped(
    list.command('remove').description('remove an entry by its id (as `show` lists it)').requiredOption('--id <id>', 'the entry'),
  ).action((o) => run<Entry>('risk list remove', { ...scope(o), id: o.id }, Boolean(o.json), (r) => `removed ${line(r)}`));

  scoped(list.command('show').description('every entry: id, list, kind, value, its expiry (or expired) and note')).action((o) =>
    run<Entry[]>('risk list show', scope(o), Boolean(o.json), (r) => (r.length ? r.map(line).join('\n') : '(no entries)')),
  );
}

function holdCommands(risk: Program, run: Run) {
  const hold = risk.command('hold').description('the platform hold of projects whose decline ratio stayed far above their own');
  hold
    .command('list')
    .description('the projects held now, with why')
    .option('--project <id>', 'only this project')
    .option('--json', 'print JSON')
    .action((o) =>
      run<HoldRow[]>('risk hold list', { project: o.project }, Boolean(o.json), (r) =>
        r.length ? r.map(holdLine).join('\n') : 'no project is held',
      ),
    );
  hold
    .command('lift')
    .description("lift a project's hold: its card payments are screened as before")
    .requiredOption('--project <id>', 'the project')
    .option('--json', 'print JSON')
    .action((o) =>
      run<HoldRow>('risk hold lift', { project: o.project }, Boolean(o.json), (r) => `lifted the hold of ${r.project_id} (${r.reason})`),
    );
}
