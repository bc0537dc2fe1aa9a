// One e-mail address is one value whichever form its domain is written in (docs/records.md §E-mail
// addresses): `ann@bücher.example` and `ann@xn--bcher-kva.example` name one mailbox. An address is
// stored and answered as written; every comparison (unique values, the value index, linking
// meetings, e-mails and members to contacts) takes its key: folded as text is (src/lib/fold.ts),
// its domain in ASCII (IDNA, as `node:url` gives it). Meetings, e-mails and mailboxes take ASCII
// addresses only, so their key is their folded text, which they compare already.
import { domainToASCII, domainToUnicode } from 'node:url';
import { foldText } from './fold.ts';

// Printable ASCII: any other character (a control one included) is for domainToASCII to judge.
const ASCII = /^[ -~]*$/u;
const ACE_LABEL = /(?:^|\.)xn--/u;
const ACE_ANYWHERE = /xn--/iu;
// Characters no address holds (docs/records.md §E-mail addresses): the control characters (C0, DEL,
// C1) and the invisible ones, Unicode's format characters (the soft hyphen, zero-width space and
// joiners, bidi marks, embeddings and isolates, word joiner, BOM) and the other default-ignorable
// code points (variation selectors, Hangul fillers). Shown as nothing, they would make two
// addresses that read alike two values.
const CONTROL = /\p{Cc}/u;
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
const UNHELD = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/** The first character of `address` that no address holds, written `U+200B`; undefined when none. */
export function unheldCharacter(address: string): string | undefined {
  const m = UNHELD.exec(address);
  return m ? `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : undefined;
}

/**
 * An address without its invisible characters, for an address stored before they were refused;
 * undefined when it holds a control character, which may stand for anything and is kept as it is.
 */
export function withoutInvisible(address: string): string | undefined {
  return CONTROL.test(address) ? undefined : address.replace(INVISIBLE, '');
}

/**
 * A domain without its final dot: `acme.test.` is `acme.test` written with the DNS root, one
 * domain, as a URL's host is read (src/records/index/values.ts, urlHost).
 */
export function unrooted(domain: string): string {
  return domain.length > 1 && domain.endsWith('.') ? domain.slice(0, -1) : domain;
}

/**
 * The address as every comparison takes it: folded, its domain without a final dot
 * (`ann@acme.test.` → `ann@acme.test`), and a domain holding a character outside ASCII written in
 * ASCII (`ANN@Bücher.example` → `ann@xn--bcher-kva.example`). A domain IDNA refuses
 * (domainToASCII answers '') is compared folded, as written.
 */
export function emailKey(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return foldText(address);
  const local = address.slice(0, at);
  const domain = unrooted(address.slice(at + 1));
  if (ASCII.test(domain)) return foldText(`${local}@${domain}`);
  const ascii = domainToASCII(domain);
  return ascii === '' ? foldText(`${local}@${domain}`) : `${foldText(local)}@${ascii}`;
}

/**
 * The spelling of an address written with its domain's final dot (`Ann@Acme.test.`): its key with
 * the dot, then a space (`ann@acme.test. `); undefined for any other address. The value index
 * holds it beside the key so that `contains` finds the address as written, as it is answered. A
 * key may end with a dot (`ann@acme.test..` is `ann@acme.test.`), but no address holds a space, so
 * a comparison of keys (a unique field, a meeting's participants) never meets this row.
 */
export function emailRootedSpelling(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0) return undefined;
  const domain = address.slice(at + 1);
  return unrooted(domain) === domain ? undefined : `${emailKey(address)}. `;
}

/**
 * The other spelling of an address whose key's domain has an ASCII-encoded (`xn--`) label: the
 * key with its domain in Unicode, folded (`ann@bücher.example`); undefined for any other address.
 * The value index holds it beside the key so that `contains` finds a part of either spelling.
 */
export function emailUnicodeSpelling(address: string): string | undefined {
  // An ASCII address without an `xn--` label has no other spelling: its key is not computed again.
  if (ASCII.test(address) && !ACE_ANYWHERE.test(address)) return undefined;
  const key = emailKey(address);
  const at = key.lastIndexOf('@');
  const domain = key.slice(at + 1);
  if (at < 0 || !ACE_LABEL.test(domain)) return undefined;
  const unicode = domainToUnicode(domain);
  if (unicode === '') return undefined;
  const spelled = `${key.slice(0, at)}@${foldText(unicode)}`;
  return spelled === key ? undefined : spelled;
}
