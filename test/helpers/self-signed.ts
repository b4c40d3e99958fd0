// A throwaway self-signed certificate for 127.0.0.1 (Debian's openssl), for tests of TLS listeners.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Writes a P-256 certificate and key valid two days for IP 127.0.0.1; answers their files and the PEM certificate. */
export function selfSigned(prefix: string): { dir: string; cert: string; key: string; pem: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { dir, cert, key, pem: readFileSync(cert) };
}
