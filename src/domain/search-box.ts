import { parseMajorAmount } from './portal.ts';
import { UUID_PATTERN } from './ids.ts';

/**
 * The portal's one search box (docs/search.md "The portal's search box"): what a merchant types
 * (a reference, an order id, an e-mail, a customer's name, a card's last four digits, an amount)
 * as a query of the search language. Text already in that language (a field, quotes, brackets,
 * an operator, a wildcard) is taken as it is. Otherwise each word must match one of those, so
 * `Vries 1111` finds the orders of a customer named de Vries paid with a card ending in 1111.
 * The amount is read in the major unit of `currency` (`19.95`, `19,95`).
 */
export function searchBoxQuery(text: string, currency: string): string {
  const typed = text.trim();
  if (!typed || typed === '*') return '';
  if (isQueryLanguage(typed)) return typed;
  return typed
    .split(/\s+/)
    .map((word) => `(${alternatives(word, currency).join(' OR ')})`)
    .join(' AND ');
}

const LANGUAGE = /[:()[\]{}"*?\\]|&&|\|\||(?:^|\s)(?:AND|OR|NOT)(?:\s|$)|(?:^|\s)[-+!]/;
const isQueryLanguage = (text: string) => LANGUAGE.test(text);

function alternatives(word: string, currency: string): string[] {
  const w = `"${word}"`; // a word in quotes is taken literally (a reference may hold '-' or '.')
  // a bare word: the merchant's reference, the customer's e-mail, the description
  const alts = [w, `customer.name:${w}`];
  if (/^\d{4}$/.test(word)) alts.push(`transactions.payment_method_details.last4:${word}`);
  if (UUID_PATTERN.test(word)) alts.push(`id:${word}`, `transactions.id:${word}`);
  const amount = parseMajorAmount(word.replace(/^[€$£]/, ''), currency);
  if (amount !== undefined) alts.push(`amount:${amount}`);
  return alts;
}
