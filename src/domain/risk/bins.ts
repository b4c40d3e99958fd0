import { isCountry } from './lists.ts';

/**
 * Which country issued a card, from its first digits (docs/risk.md "The BIN table"). Tender
 * ships only the test cards' BINs below: a real card's country is known once the operator loads a
 * BIN table (RISK_BIN_TABLE, the format of parseBinTable). Without one, the `country` lists match
 * only these test cards.
 */

/**
 * Tender's test cards (acquirer/simulator/cards.ts) and the usual sandbox country cards, whose
 * digits 7 to 9 are the ISO 3166 numeric code (400000 250... France). Source: the simulator's own
 * card list and that sandbox convention, 2026-12-02. No real issuer is in it.
 */
export const TEST_BINS = `# prefix,country (test cards only)
411111,US
424242,US
555555,US
222300,US
378282,US
400000056,BE
400000250,FR
400000276,DE
400000528,NL
400000826,GB
`;

/** Prefix to country, by prefix length: the longest prefix that matches wins. */
export type BinTable = Map<number, Map<string, string>>;

/**
 * A BIN table as text: one `prefix,country` a line (a prefix of 4 to 11 digits, an ISO 3166
 * alpha-2 code), `#` comments and blank lines ignored. A bad line fails the whole table, naming it.
 */
export function parseBinTable(text: string, into: BinTable = new Map()): BinTable {
  text.split(/\r?\n/).forEach((line, i) => {
    const l = line.trim();
    if (!l || l.startsWith('#')) return;
    const m = /^([0-9]{4,11})\s*[,;]\s*([A-Za-z]{2})$/.exec(l);
    if (!m || !isCountry(m[2]!.toUpperCase()))
      throw new Error(`BIN table line ${i + 1}: expected prefix,country (such as 45717360,DK), not "${l}"`);
    const byLength = into.get(m[1]!.length) ?? into.set(m[1]!.length, new Map()).get(m[1]!.length)!;
    byLength.set(m[1]!, m[2]!.toUpperCase());
  });
  return into;
}

/** The card's issuing country, if the table knows its BIN. */
export function countryOf(table: BinTable, pan: string): string | undefined {
  for (let n = 11; n >= 4; n--) {
    const c = table.get(n)?.get(pan.slice(0, n));
    if (c) return c;
  }
  return undefined;
}
