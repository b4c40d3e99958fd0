import type { Connector } from '../connector.ts';
import { isoConnector } from './connector.ts';
import type { LinkJournal } from './journal.ts';
import { ISO_1987, loadLayout, type Layout } from './layout.ts';
import { Link, parseHostUrl, type LinkState } from './link.ts';
import { IsoOperations, type Binding } from './operations.ts';
import { readFileSync } from 'node:fs';
import { BufferedJournal } from './buffered-journal.ts';

/**
 * The links of a Tender node: one persistent connection per acquiring host, shared by every
 * live project bound to it, and the connector of each project (its binding: terminal, card
 * acceptor, whether unauthenticated payments are refused).
 */

export interface LinkSettings {
  timeoutMs: number;
  echoMs: number;
  layout: Layout;
  /** how often STAN blocks are reserved ahead for bound terminals */
  warmMs: number;
}

/** ISO8583_TIMEOUT_MS (default 20 000), ISO8583_ECHO_MS (30 000), ISO8583_WARM_MS (60 000), ISO8583_LAYOUT (a JSON file of layout overrides). */
export function linkSettingsFrom(env: NodeJS.ProcessEnv): LinkSettings {
  const ms = (name: string, fallback: number) => {
    const v = env[name];
    if (v === undefined || v === '') return fallback;
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${name}: expected a whole number of milliseconds >= 1`);
    return Number(v);
  };
  return {
    timeoutMs: ms('ISO8583_TIMEOUT_MS', 20_000),
    echoMs: ms('ISO8583_ECHO_MS', 30_000),
    warmMs: ms('ISO8583_WARM_MS', 60_000),
    layout: env.ISO8583_LAYOUT ? loadLayout(readFileSync(env.ISO8583_LAYOUT, 'utf8')) : ISO_1987,
  };
}

/** A project's binding as its settings hold it, or undefined when it has none (or a broken one). */
export function bindingOf(settings: Record<string, unknown> | undefined): Binding | undefined {
  const b = settings?.acquirer as Partial<Binding> | undefined;
  if (!b || typeof b.acquirer !== 'string' || typeof b.terminal_id !== 'string' || typeof b.card_acceptor_id !== 'string') return undefined;
  try {
    parseHostUrl(b.acquirer);
  } catch {
    return undefined;
  }
  return {
    acquirer: b.acquirer,
    terminal_id: b.terminal_id,
    card_acceptor_id: b.card_acceptor_id,
    refuse_unauthenticated: b.refuse_unauthenticated === true,
  };
}

export class IsoLinks {
  private links = new Map<string, Link>();
  private connectors = new Map<string, { key: string; connector: Connector }>();
  private journal: BufferedJournal;

  constructor(
    journal: LinkJournal,
    private settings: LinkSettings,
    private log?: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void,
  ) {
    this.journal = new BufferedJournal(journal, {
      warmMs: settings.warmMs,
      onError: (err) => this.log?.('warn', 'acquirer link journal', { error: err.message }),
    });
  }

  /** Every journal write queued so far is in the database. */
  flush() {
    return this.journal.flush();
  }

  /** The connector of a live project with a binding; undefined without one (its payments are refused). */
  connectorFor = (project: { id: string; settings: Record<string, unknown> }): Connector | undefined => {
    const binding = bindingOf(project.settings);
    if (!binding) return undefined;
    const key = JSON.stringify(binding);
    const known = this.connectors.get(project.id);
    if (known?.key === key) return known.connector;
    let link = this.links.get(binding.acquirer);
    if (!link) {
      link = new Link({
        url: binding.acquirer,
        timeoutMs: this.settings.timeoutMs,
        echoMs: this.settings.echoMs,
        layout: this.settings.layout,
        log: this.log,
      });
      this.links.set(binding.acquirer, link);
    }
    const connector = isoConnector(new IsoOperations(link, this.journal, binding), (msg, fields) => this.log?.('warn', msg, fields));
    this.connectors.set(project.id, { key, connector });
    return connector;
  };

  /** Each host's link, for /readyz and the logs. */
  states(): LinkState[] {
    return [...this.links.values()].map((l) => l.state());
  }

  async close() {
    await this.journal.close();
    await Promise.all([...this.links.values()].map((l) => l.close()));
    this.links.clear();
    this.connectors.clear();
  }
}
