// The rule of src/lib/json-numbers.ts (docs/errors.md §Numbers in bodies), over many numbers:
// every double the API can answer, written as it answers it, is taken back; every integer literal
// that no double is, and every literal beyond a double's range, is found, by the cheap test on the
// text as well as by the reviver, wherever it stands in a body.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { firstUnheldNumber, mayHoldUnheldNumber, unheldNumber } from '../../src/lib/json-numbers.ts';

const places = (literal: string) => [
  [literal, ''],
  [`{"fields":{"n":${literal}}}`, 'fields.n'],
  [`{"a":[1, ${literal}]}`, 'a[1]'],
  [`[\n\t${literal}\n]`, '[0]'],
];

test('every finite double, written as JSON writes it, is taken as it is', () => {
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
      const literal = JSON.stringify(x);
      assert.equal(unheldNumber(literal, Number(literal)), null, literal);
      for (const [text] of places(literal)) assert.equal(firstUnheldNumber(text!), null, text);
    }),
    { numRuns: 2000 },
  );
  for (const literal of ['-0', '9007199254740991', '9007199254740992', '1000000000000000000000', '12345678901234567000', '1e-400', '123.456789012345678901'])
    assert.equal(firstUnheldNumber(`{"n":${literal}}`), null, literal);
});

test('an integer literal beyond 2^53 that no double is is found wherever it stands, the cheap test first', () => {
  const beyond = fc.bigInt({ min: 2n ** 53n, max: 10n ** 40n });
  fc.assert(
    fc.property(beyond, fc.boolean(), (b, negative) => {
      const literal = `${negative ? '-' : ''}${b}`;
      const x = Number(literal);
      const held = BigInt(x) === BigInt(literal) || String(x) === literal;
      for (const [text, path] of places(literal)) {
        const hit = firstUnheldNumber(text!);
        if (held) assert.equal(hit, null, text);
        else {
          assert.ok(mayHoldUnheldNumber(text!), text);
          assert.deepEqual([hit?.path, hit?.source], [path, literal], text);
        }
      }
    }),
    { numRuns: 2000 },
  );
});

test('a literal beyond the range of a double is found wherever it stands, the cheap test first', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 9_999_999 }), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 400 }), fc.boolean(), (m, point, e, neg) => {
      const digits = String(m);
      const mantissa = point > 0 && point < digits.length ? `${digits.slice(0, point)}.${digits.slice(point)}` : digits;
      const literal = `${neg ? '-' : ''}${mantissa}e${e}`;
      if (Number.isFinite(Number(literal))) return;
      for (const [text, path] of places(literal)) {
        assert.ok(mayHoldUnheldNumber(text!), text);
        assert.equal(firstUnheldNumber(text!)?.path, path, text);
      }
    }),
    { numRuns: 2000 },
  );
  const long = `1${'0'.repeat(400)}`;
  assert.equal(firstUnheldNumber(`{"n":${long}}`)?.path, 'n');
});

test('ids and words that hold digits do not make a body parse twice', () => {
  for (const text of ['{"id":"acc_01m8e123k5"}', '{"relationships":{"$account":"acc_01m8w9e4mxkdd6jadp063b1few"}}', '{"n":123.5e-7}', '{"n":1e21}'])
    assert.equal(mayHoldUnheldNumber(text), false, text);
});
