import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { walletOrder } from './wallets.ts';
import { startTestService, request, type TestService } from './service.ts';
import type { StartOptions } from '../../src/main.ts';
import type { Config } from '../../src/config.ts';
import { generateSandboxKeys, sealToken, type ProtocolVersion } from '../../src/wallets/wallet-b-token.ts';

/** The public test vectors (test/fixtures/wallet-b): a recipient key, root signing keys and tokens they sign. */
export const vectors = JSON.parse(readFileSync(new URL('../fixtures/wallet-b/ecv2-tink-test-keys.json', import.meta.url), 'utf8'));

export const testRoot = generateSandboxKeys(); // listed in the test root keys file
export const prodRoot = generateSandboxKeys(); // listed in the production root keys file
const FAR = '32506264800000';
const rootsOf = (publicKey: string) =>
  (['ECv1', 'ECv2', 'ECv2SigningOnly'] as const).map((protocolVersion) => ({ keyValue: publicKey, protocolVersion, keyExpiration: FAR }));

/** Starts the service with root key files: the vectors' roots and testRoot for test, prodRoot for production. */
export async function startWalletBService(
  opts: { liveConnector?: StartOptions['liveConnector']; config?: Partial<Config> } = {},
): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'tender-wallet-b-'));
  const testFile = join(dir, 'test-keys.json');
  const prodFile = join(dir, 'keys.json');
  writeFileSync(testFile, JSON.stringify({ keys: [...vectors.root_signing_keys.keys, ...rootsOf(testRoot.rootPublicKey)] }));
  writeFileSync(prodFile, JSON.stringify({ keys: rootsOf(prodRoot.rootPublicKey) }));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  try {
    const t = await startTestService({
      liveConnector: opts.liveConnector,
      config: { ...opts.config, walletBTestRootKeysFile: testFile, walletBRootKeysFile: prodFile },
    });
    return {
      ...t,
      async close() {
        await t.close();
        removeDir();
      },
    };
  } catch (err) {
    removeDir();
    throw err;
  }
}

export const BROWSER = {
  browser_info_screen_width: 1920,
  browser_info_screen_height: 1080,
  browser_info_color_depth: 24,
  browser_info_user_agent: 'Mozilla/5.0 (test)',
  browser_info_time_zone_offset: -60,
  browser_info_language: 'nl-NL',
  browser_info_java_enabled: false,
};

let messages = 0;

/**
 * The wallet-b-pay calls of a merchant and a wallet, on the service `svc()` returns (read at
 * call time, so a test file can declare them before its `before` starts the service).
 */
export function walletBClient(svc: () => TestService) {
  const tokenUrl = (test = true) => `${svc().config.walletBTokenUrl}/${test ? 'test/' : ''}tokens/`;
  const payUrl = (o: string, txn: string) => `${svc().url}/pay/${o}/select-payment-method/wallet-b-pay/${txn}/`;

  /** The project's tokenization parameters, as a merchant reads them. */
  async function recipientOf(key = svc().project.api_key) {
    const res = await svc().api('GET', '/v1/wallet-b-pay/tokenization/', undefined, { key });
    assert.equal(res.status, 200, res.text);
    return { recipientId: res.body.recipient_id as string, publicKey: res.body.tokenization_specification.parameters.publicKey as string };
  }

  /** A token as the wallet makes it, for the project's recipient key. */
  async function sealed(
    card: { pan?: string; authMethod?: 'PAN_ONLY' | 'CRYPTOGRAM_3DS'; cryptogram?: string; eci?: string } = {},
    opts: { version?: ProtocolVersion; root?: typeof testRoot; key?: string; messageId?: string } = {},
  ) {
    const { recipientId, publicKey } = await recipientOf(opts.key);
    const authMethod = card.authMethod ?? 'CRYPTOGRAM_3DS';
    const details: Record<string, unknown> = { pan: card.pan ?? '4111111111111111', expirationMonth: 12, expirationYear: 2031, authMethod };
    if (authMethod === 'CRYPTOGRAM_3DS')
      Object.assign(details, { cryptogram: card.cryptogram ?? 'AgAAAAAABk4DWZ4C28yUQAAAAAA=', eciIndicator: card.eci ?? '05' });
    const payload = {
      messageExpiration: String(Date.now() + 3_600_000),
      messageId: opts.messageId ?? `m-${++messages}-${Date.now()}`,
      paymentMethod: 'CARD',
      paymentMethodDetails: details,
    };
    const root = opts.root ?? testRoot;
    return sealToken(payload, {
      protocolVersion: opts.version ?? 'ECv2',
      rootPrivateKey: root.rootPrivateKey,
      recipientId,
      recipientPublicKey: publicKey,
    });
  }

  return {
    recipientOf,
    sealed,
    tokenize: (body: Record<string, unknown>, test = true) => request(tokenUrl(test), 'POST', body),
    pay: (o: string, txn: string, body: Record<string, unknown>) => request(payUrl(o, txn), 'POST', body),
    vaultRows: async (txnId: string) =>
      (await svc().db.query<{ n: number }>('SELECT count(*)::int AS n FROM vault_cards WHERE transaction_id = $1', [txnId]))[0].n,
    walletOrder: (key = svc().project.api_key, over: Record<string, unknown> = {}) => walletOrder(svc(), 'wallet-b-pay', key, over),
  };
}
