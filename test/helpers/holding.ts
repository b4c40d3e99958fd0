import type { Authenticator } from '../../src/acquirer/authenticator.ts';
import type { Connector } from '../../src/acquirer/connector.ts';

type Both = Connector & Authenticator;

/**
 * A connector whose next call of one method is held until the test lets it go: what happens to a
 * payment while its call is at the acquirer.
 */
export function holding(inner: Both) {
  let hold: { method: string; reached: () => void; released: Promise<void> } | undefined;
  const connector = new Proxy(inner, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const h = hold?.method === prop ? hold : undefined;
        if (h) {
          hold = undefined;
          h.reached();
          await h.released;
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  /** Holds the next call of `method`: `reached` once it is made, `release` lets it go on. */
  const holdNext = (method: keyof Both) => {
    let reached!: () => void;
    let release!: () => void;
    const at = new Promise<void>((r) => (reached = r));
    hold = { method, reached, released: new Promise<void>((r) => (release = r)) };
    return { reached: at, release };
  };
  return { connector, holdNext };
}
