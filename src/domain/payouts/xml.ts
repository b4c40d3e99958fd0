/**
 * Reading the bank's XML files (docs/payouts.md "Bank files in"), safely: a bounded size, no
 * DOCTYPE (so no entity, external or not, can be declared), and a well-formed document, or a
 * clear ValidationError. The tree is xmlbuilder2's; its reader takes any closing tag for the
 * open element's and stops quietly at the end of a truncated file, so the nesting is checked
 * here first: a cut-off statement must not read as a shorter one.
 */
import { create } from 'xmlbuilder2';
import { invalid } from '../errors.ts';

/** The largest bank file Tender reads: a day's statement of a payout account is far smaller. */
export const MAX_BANK_FILE_BYTES = 8 * 1024 * 1024;

/** The part of xmlbuilder2's DOM element the readers use. */
export interface XmlElement {
  nodeType: number;
  localName: string;
  namespaceURI: string | null;
  textContent: string | null;
  childNodes: ArrayLike<XmlElement>;
  getAttribute(name: string): string | null;
}

const ELEMENT_NODE = 1;

const bad = (why: string) => invalid('file', `the file is not well-formed XML: ${why}`);

/** Where the text is at `index`, as a person counts: line and column. */
function at(text: string, index: number): string {
  const before = text.slice(0, index).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/**
 * Comments, CDATA sections, processing instructions, tags (with their quoted attributes), and
 * what may not stand alone in text: a `<` that starts none of them, an `&` that is no reference.
 */
const MARKUP =
  /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<(\/?)([^\s/>!?<]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<|&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/g;

/** One document element, every element closed by its own name, no text outside it. */
function checkNesting(text: string): void {
  const open: string[] = [];
  let roots = 0;
  let last = 0;
  for (const m of text.matchAll(MARKUP)) {
    const between = text.slice(last, m.index);
    if (!open.length && between.trim()) throw bad(`text outside the document element at ${at(text, last)}`);
    last = m.index + m[0].length;
    if (m[0] === '<') {
      if (!text.includes('>', m.index)) throw bad(`the file ends inside a tag at ${at(text, m.index)} (cut off?)`);
      throw bad(`a "<" that starts no tag at ${at(text, m.index)}`);
    }
    if (m[0] === '&') throw bad(`an "&" that is no character reference at ${at(text, m.index)}`);
    const name = m[2];
    if (name === undefined) continue; // a comment, CDATA section or processing instruction
    if (m[1]) {
      const expected = open.pop();
      if (expected !== name) throw bad(`</${name}> at ${at(text, m.index)} closes ${expected === undefined ? 'nothing' : `<${expected}>`}`);
      continue;
    }
    if (!open.length && ++roots > 1) throw bad(`a second document element <${name}> at ${at(text, m.index)}`);
    if (!m[4]) open.push(name);
  }
  if (text.slice(last).trim() && !open.length) throw bad(`text outside the document element at ${at(text, last)}`);
  if (open.length) throw bad(`the file ends inside <${open.at(-1)}> (cut off?)`);
  if (!roots) throw bad('no document element');
}

/** The document element of a bank file, read safely (see above); a ValidationError naming what is wrong otherwise. */
export function readXml(text: string): XmlElement {
  if (Buffer.byteLength(text, 'utf8') > MAX_BANK_FILE_BYTES)
    throw invalid('file', `the file is larger than ${MAX_BANK_FILE_BYTES} bytes, more than a bank file Tender reads`);
  const body = text.replace(/^\uFEFF/, '');
  if (/<!DOCTYPE/i.test(body))
    throw invalid('file', 'the file has a DOCTYPE: a bank file carries none, and Tender reads no entity declarations');
  checkNesting(body);
  try {
    return create(body).root().node as unknown as XmlElement;
  } catch (e) {
    throw bad(String((e as Error).message).split('\n')[0]!);
  }
}

/** The element children of `el` named `name`, in its namespace. */
export const children = (el: XmlElement, name: string): XmlElement[] =>
  Array.from(el.childNodes).filter((n) => n.nodeType === ELEMENT_NODE && n.localName === name && n.namespaceURI === el.namespaceURI);

/** The first element down a path of names, or undefined. */
export function child(el: XmlElement | undefined, ...path: string[]): XmlElement | undefined {
  let at = el;
  for (const name of path) at = at && children(at, name)[0];
  return at;
}

/** The trimmed text down a path of names, or undefined when it is absent or empty. */
export function textOf(el: XmlElement | undefined, ...path: string[]): string | undefined {
  const t = child(el, ...path)?.textContent?.trim();
  return t ? t : undefined;
}

/** An ISO 20022 amount (`12.34`, up to five decimals) in cents; a ValidationError when it is none or holds part of a cent. */
export function cents(text: string | undefined, where: string): number {
  const m = /^([0-9]{1,13})(?:\.([0-9]{1,5}))?$/.exec(text ?? '');
  if (!m) throw invalid('file', `${where}: the amount ${JSON.stringify(text ?? '')} is not an ISO 20022 amount`);
  const fraction = (m[2] ?? '').padEnd(5, '0');
  if (fraction.slice(2) !== '000') throw invalid('file', `${where}: the amount ${text} holds part of a cent`);
  return Number(m[1]) * 100 + Number(fraction.slice(0, 2));
}
