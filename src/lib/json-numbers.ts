// Numbers that a double does not hold as written (docs/errors.md §Numbers in bodies): a literal
// beyond a double's range (`1e400`, which JSON.parse reads as Infinity) and an integer written in
// plain digits beyond ±(2^53 − 1) that the double it becomes is not (`12345678901234567890`, read
// as 12345678901234567168 and answered as 12345678901234567000). Both would be stored as another
// number than the one sent, or, serialized again, as `null`; they are refused, naming their place.
// Decimals keep JSON's double semantics (docs/records.md §Numbers).
//
// JSON.parse hands a reviver the source text of each primitive (`context.source`), but a reviver
// costs a call per value; it runs only on text that could hold such a literal: an integer beyond
// 2^53 has 16 digits or more in a row, and a literal beyond 1.8e308 either that many digits or an
// exponent of three digits, each at the start of a number token (after `:`, `[`, `,` or white
// space), so that ids and words such as `acc_01m8e123…` do not make a body parse twice.
import { longerThan } from './chars.ts';

/** JSON's source-text access, which TypeScript's lib does not declare yet. */
interface RawJson {
  readonly rawJSON: string;
}
const Json = JSON as JSON & { rawJSON(text: string): RawJson; isRawJSON(value: unknown): value is RawJson };

const MAY_HOLD = /(?:^|[\s:[,])-?(?:\d{16}|\d+(?:\.\d+)?[eE][+-]?\d{3})/;

/** Whether `text` could hold a number literal that `unheldNumber` refuses: the cheap test before any reviver. */
export function mayHoldUnheldNumber(text: string): boolean {
  return MAY_HOLD.test(text);
}

const INTEGER = /^([+-]?)0*(\d+)$/;

/**
 * Why the number literal `source`, read as `value`, cannot be taken as written, or null when it
 * can: `value` is finite, and an integer literal is either the double it became exactly (2^53,
 * 10^21) or that double's own shortest form, the form the API answers with, so that every answer
 * can be written back (12345678901234567000).
 */
export function unheldNumber(source: string, value: number): string | null {
  if (!Number.isFinite(value)) return `is beyond the range of a number here (an IEEE 754 double, at most ±${Number.MAX_VALUE})`;
  if (Number.isSafeInteger(value)) return null;
  const m = INTEGER.exec(source);
  if (!m) return null;
  const digits = `${m[1] === '-' ? '-' : ''}${m[2]}`;
  if (String(value) === digits || BigInt(digits) === BigInt(value)) return null;
  return `is an integer beyond ±${Number.MAX_SAFE_INTEGER} that a number here (an IEEE 754 double) does not hold: it reads as ${String(value)}`;
}

// Characters that print nothing or move what follows (controls, format characters such as the
// bidirectional isolates, line and paragraph separators): a message shows a line break or a tab
// as `\n`, `\r`, `\t` and any other as its code point, `\u{2066}`, so that a value quoted from a
// file or a body is one line, never writes a terminal's escape sequence, and never hides itself.
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const seen = (c: string): string => NAMED[c] ?? `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`;

/** `s` with each character that prints nothing written as above (an error message's text, every line of an import's report). */
export const visible = (s: string): string => s.replace(UNSEEN, seen);

/**
 * A literal or value as an error message shows it: whole up to 40 characters, else its first 20
 * and last 10; each character that prints nothing written as above. Characters are code points
 * (docs/errors.md §Lengths): a cut between the two UTF-16 units of one (an emoji) would leave a
 * lone surrogate, which a strict reader of the JSON error refuses.
 */
export const shownLiteral = (source: string): string =>
  visible(longerThan(source, 40) ? `${[...source.slice(0, 40)].slice(0, 20).join('')}…${[...source.slice(-20)].slice(-10).join('')}` : source);

function keepUnheld(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && context?.source !== undefined && unheldNumber(context.source, value) !== null) return Json.rawJSON(context.source);
  return value;
}

/**
 * `text` parsed as JSON.parse does, but with each number `unheldNumber` refuses kept as its
 * source text (a `JSON.rawJSON` value, which JSON.stringify writes back as it was). The reviver
 * runs only when `mayHoldUnheldNumber(text)`.
 */
export function parseKeepingNumbers(text: string): unknown {
  return mayHoldUnheldNumber(text) ? JSON.parse(text, keepUnheld) : JSON.parse(text);
}

/** Whether `value` is a number `parseKeepingNumbers` kept as its source text. */
export const isKeptNumber = (value: unknown): value is RawJson => Json.isRawJSON(value);

/**
 * The place of the first kept number of `value` ('' for `value` itself), as `fields.n` or
 * `values[2]`, with its source and why it is refused; or null. A loop, so that no nesting
 * overflows the stack.
 */
export function firstKeptNumber(value: unknown): { path: string; source: string; reason: string } | null {
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: '' }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const { v, path } = top;
    if (isKeptNumber(v)) return { path, source: v.rawJSON, reason: unheldNumber(v.rawJSON, Number(v.rawJSON)) ?? '' };
    if (v === null || typeof v !== 'object') continue;
    const children = Array.isArray(v)
      ? v.map((c: unknown, i) => ({ v: c, path: `${path}[${i}]` }))
      : Object.entries(v).map(([k, c]) => ({ v: c as unknown, path: path === '' ? k : `${path}.${k}` }));
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return null;
}

/** The first number of the JSON `text` that `unheldNumber` refuses, or null; nothing is parsed when the text cannot hold one. */
export function firstUnheldNumber(text: string): { path: string; source: string; reason: string } | null {
  return mayHoldUnheldNumber(text) ? firstKeptNumber(JSON.parse(text, keepUnheld)) : null;
}
