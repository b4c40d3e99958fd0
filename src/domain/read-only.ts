const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const isEmpty = (v: unknown) => v === undefined || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/** Shown once, in the answer that created the transaction: a client repeating that answer may hold it. */
const SHOWN_ONCE = new Set(['setup_token']);

/**
 * Whether a read-only value a client sends back is the one the service holds, as clients
 * round-trip it: members it leaves out are unchanged (the plugin SDK drops `events`, `flags`…),
 * `[]` and `{}` are the same empty value (PHP), and the one-time `setup_token` is ignored.
 * Anything else that differs, including a member the service does not show, is a change.
 */
export function unchanged(sent: unknown, held: unknown): boolean {
  if (isEmpty(sent) && isEmpty(held)) return true;
  if (Array.isArray(sent)) {
    if (!Array.isArray(held) || sent.length !== held.length) return false;
    return sent.every((v, i) => unchanged(v, held[i]));
  }
  if (isObject(sent)) {
    if (!isObject(held)) return false;
    return Object.entries(sent).every(([k, v]) => SHOWN_ONCE.has(k) || unchanged(v, held[k]));
  }
  return sent === held;
}
