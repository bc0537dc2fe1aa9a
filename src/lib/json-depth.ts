// How deep a parsed JSON value nests arrays and objects (docs/errors.md): what walks a value by
// recursion (the NUL check, validation, the fingerprint of an Idempotency-Key) overflows the stack
// on one nested hundreds of thousands of levels, which a request body or an import line can hold.
// So both refuse a value nested deeper than MAX_JSON_DEPTH before anything walks it.
import { isKeptNumber } from './json-numbers.ts';

export const MAX_JSON_DEPTH = 64;

/** Whether `value` is an array or object; a number kept as its source text is a number, no level. */
const nests = (value: unknown): value is object => value !== null && typeof value === 'object' && !isKeptNumber(value);

/** Whether `value` nests arrays and objects more than `max` levels deep; a loop, so it cannot overflow itself. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ v: object; depth: number }> = nests(value) ? [{ v: value, depth: 1 }] : [];
  for (let top = stack.pop(); top; top = stack.pop()) {
    if (top.depth > max) return true;
    for (const child of Object.values(top.v)) if (nests(child)) stack.push({ v: child, depth: top.depth + 1 });
  }
  return false;
}
