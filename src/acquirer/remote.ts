import type { Authenticator } from './authenticator.ts';
import type { Connector, Outcome, ThreeDsResult } from './connector.ts';
import { SIMULATOR_CAPABILITIES } from './simulator/index.ts';

/**
 * The test projects' acquirer in another process on this machine (TENDER_TEST_ACQUIRER_URL, a
 * loopback URL): each operation is a JSON POST to `{url}/{method}`, answered 200 with the
 * outcome; its simulated ACS answers the 3-D Secure calls the same way. What a network connector looks like to Tender, without a network: the chaos test
 * serves the simulator behind the fault wrapper there, so that what the acquirer did survives
 * the service being killed. Anything but a 200 with JSON is no answer (a throw).
 */
export function remoteConnector(base: string, timeoutMs: number): Connector & Authenticator {
  const post = async <T>(method: string, body: unknown): Promise<T> => {
    const res = await fetch(`${base.replace(/\/$/, '')}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`the acquirer answered ${res.status}`);
    return JSON.parse(text) as T;
  };
  return {
    name: 'remote',
    capabilities: SIMULATOR_CAPABILITIES,
    authenticate3ds: (req) => post<ThreeDsResult>('authenticate3ds', req),
    completeChallenge: (req) => post<ThreeDsResult>('completeChallenge', req),
    authorize: (req) => post<Outcome>('authorize', req),
    capture: (req) => post<Outcome>('capture', req),
    void: (req) => post<Outcome>('void', req),
    refund: (req) => post<Outcome>('refund', req),
    inquire: (req) => post<Outcome>('inquire', req),
    reverse: (req) => post<Outcome>('reverse', req),
  };
}
