import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The EPC's SCT schema of pain.001.001.09 (test/fixtures/sepa, see docs/payouts.md for its source). */
const PAIN_XSD = join(import.meta.dirname, '..', 'fixtures', 'sepa', 'pain.001.001.09.xsd');

/** xmllint's verdict on a file against the EPC's SCT schema: '' when it validates, else its complaint. */
export function xmllint(path: string, schema = PAIN_XSD): string {
  try {
    execFileSync('xmllint', ['--noout', '--schema', schema, path], { stdio: 'pipe' });
    return '';
  } catch (e) {
    return String((e as { stderr?: Buffer }).stderr ?? e);
  }
}
