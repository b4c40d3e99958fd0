import { readFileSync } from 'node:fs';
import type { Authenticator } from '../authenticator.ts';
import { emvAuthenticator, type EmvOptions, type ThreeDsBinding } from './server.ts';

/**
 * Each live project's EMV 3DS Server, built from its binding (settings.acquirer.three_ds, set by
 * `tender project set-acquirer --directory-server ...`) and kept while the binding is unchanged.
 * A project without a directory server gets none (main.ts: `unauthenticated`).
 */
export class ThreeDsServers {
  private known = new Map<string, { key: string; authenticator: Authenticator }>();
  constructor(private options: EmvOptions) {}

  authenticatorFor = (project: { id: string; settings: Record<string, unknown> }): Authenticator | undefined => {
    const binding = bindingOf(project.settings);
    if (!binding) return undefined;
    const key = JSON.stringify(binding);
    const known = this.known.get(project.id);
    if (known?.key === key) return known.authenticator;
    let tls: ThreeDsBinding['tls'];
    try {
      const t = binding.tls;
      tls = t && {
        cert: t.cert && readFileSync(t.cert, 'utf8'),
        key: t.key && readFileSync(t.key, 'utf8'),
        ca: t.ca && readFileSync(t.ca, 'utf8'),
      };
    } catch (err) {
      // a key file missing on this node: its payments are not authenticated (and say why in the log)
      this.options.log?.('3-D Secure: the TLS files of the binding cannot be read; no directory server is asked', {
        project: project.id,
        err: (err as Error).message,
      });
      return undefined;
    }
    const authenticator = emvAuthenticator({ ...binding, tls }, this.options);
    this.known.set(project.id, { key, authenticator });
    return authenticator;
  };
}

/** A project's 3-D Secure binding as stored, or undefined when it has none (or a broken one). */
function bindingOf(settings: Record<string, unknown> | undefined): ThreeDsBinding | undefined {
  const acquirer = settings?.acquirer as Record<string, unknown> | undefined;
  const t = acquirer?.three_ds as Partial<ThreeDsBinding> | undefined;
  if (!t || typeof t.directory_servers !== 'object' || !t.directory_servers) return undefined;
  if (typeof t.acquirer_bin !== 'string' || typeof t.mcc !== 'string' || typeof settings?.merchant_country !== 'string') return undefined;
  return {
    directory_servers: t.directory_servers,
    acquirer_bin: t.acquirer_bin,
    mcc: t.mcc,
    merchant_country: settings.merchant_country,
    merchant_id: String(acquirer?.card_acceptor_id ?? ''),
    requestor_id: String(t.requestor_id ?? ''),
    requestor_name: String(t.requestor_name ?? ''),
    ...(t.tls ? { tls: t.tls } : {}),
  };
}
