import { isIPv4, isIPv6 } from 'node:net';

/**
 * The shopper's address as the limits count it: the address itself, and its network (the /24 of an
 * IPv4 address, the /64 of an IPv6 one). Text that is no address (the plugin SDK's own tests send
 * 'test') counts as none.
 */
export function addressSubjects(raw: string | undefined): { address: string; network: string } | undefined {
  if (!raw) return undefined;
  let a = raw.trim().toLowerCase();
  // an IPv4 address in IPv6 form (a dual-stack socket's ::ffff:203.0.113.7) is the IPv4 address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) a = mapped[1]!;
  if (isIPv4(a)) {
    const octets = a.split('.').map(Number);
    return { address: octets.join('.'), network: `${octets.slice(0, 3).join('.')}.0/24` };
  }
  if (isIPv6(a.split('%')[0]!)) {
    const groups = expandIPv6(a.split('%')[0]!);
    return { address: groups.join(':'), network: `${groups.slice(0, 4).join(':')}::/64` };
  }
  return undefined;
}

/** The eight groups of an IPv6 address, each as 4 hex digits (an embedded IPv4 tail included). */
function expandIPv6(a: string): string[] {
  let text = a;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [p, q, r, s] = v4[1]!.split('.').map(Number);
    text = text.slice(0, -v4[1]!.length) + `${((p! << 8) | q!).toString(16)}:${((r! << 8) | s!).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail ? tail.split(':') : [];
  const fill = tail !== undefined ? Array(8 - left.length - right.length).fill('0') : [];
  return [...left, ...fill, ...right].map((g) => g.padStart(4, '0'));
}

/** An email address as counted: trimmed, lower case. */
export const emailSubject = (email: unknown) => (typeof email === 'string' && email.includes('@') ? email.trim().toLowerCase() : undefined);
