import { readFileSync } from 'node:fs';
import type { Connector } from '../connector.ts';
import { isoConnector } from './connector.ts';
import type { LinkJournal } from './journal.ts';
import { ISO_1987, loadLayout, type Layout } from './layout.ts';
import { Link, parseHostUrl, type LinkState } from './link.ts';
import { IsoOperations, type Binding } from './operations.ts';

/**
 * The links of a Tender node: one persistent connection per acquiring host, shared by every
 * live project bound to it, and the connector of each project (its binding: terminal, card
 * acceptor, whether unauthenticated payments are refused).
 */

export interface LinkSettings {
  timeoutMs: number;
  echoMs: number;
  layout: Layout;
}

/** The link settings from the service's (config.acquirer.iso8583): the layout file read and checked here. */
export function linkSettings(c: { timeoutMs: number; echoMs: number; layoutFile?: string }): LinkSettings {
  return { timeoutMs: c.timeoutMs, echoMs: c.echoMs, layout: c.layoutFile ? loadLayout(readFileSync(c.layoutFile, 'utf8')) : ISO_1987 };
}

/** A link as /readyz sees it: down unless connected and signed on (services/platform/health.ts). */
export interface LinkWatch {
  name: string;
  up(): boolean;
  state(): LinkState;
}

/** A project's binding as its settings hold it, or undefined when it has none (or a broken one). */
function bindingOf(settings: Record<string, unknown> | undefined): Binding | undefined {
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

  /**
   * The journal is written directly: Tender calls connectors with no transaction open, so the
   * journal's own statements never wait on the caller's. `opened` hears of each host's link once.
   */
  constructor(
    private journal: LinkJournal,
    private settings: LinkSettings,
    private log?: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void,
    private opened?: (link: LinkWatch) => void,
  ) {}

  /** The connector of a live project with a binding; undefined without one (its payments are refused). */
  connectorFor = (project: { id: string; settings: Record<string, unknown> }): Connector | undefined => {
    const binding = bindingOf(project.settings);
    if (!binding) return undefined;
    const key = JSON.stringify(binding);
    const known = this.connectors.get(project.id);
    if (known?.key === key) return known.connector;
    let link = this.links.get(binding.acquirer);
    if (!link) {
      const made = new Link({
        url: binding.acquirer,
        timeoutMs: this.settings.timeoutMs,
        echoMs: this.settings.echoMs,
        layout: this.settings.layout,
        log: this.log,
      });
      this.links.set(binding.acquirer, made);
      this.opened?.({
        name: binding.acquirer,
        up: () => {
          const s = made.state();
          return s.connected && s.signed_on;
        },
        state: () => made.state(),
      });
      link = made;
    }
    const open = link;
    const connector: Connector = {
      ...isoConnector(new IsoOperations(link, this.journal, binding)),
      // known down: it tried and is not signed on (a link just opened waits for its sign-on instead)
      linkDown: () => {
        const s = open.state();
        return !s.signed_on && s.reconnects > 0;
      },
    };
    this.connectors.set(project.id, { key, connector });
    return connector;
  };

  async close() {
    await Promise.all([...this.links.values()].map((l) => l.close()));
    this.links.clear();
    this.connectors.clear();
  }
}
