// Every valueType of docs/design.md §Record values accepts what it should, normalizes what it may,
// and refuses the rest with the path of the bad part.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VALUE_TYPES, type ValueType } from '../src/lib/resource-schemas.ts';
import { InputError } from '../src/lib/errors.ts';
import { checkValue } from '../src/records/values.ts';

const GOOD: Record<ValueType, Array<[unknown, unknown?]>> = {
  TEXT: [['hello'], ['']],
  MARKDOWN: [['# Title\n\n*x*']],
  EMAIL: [['ann@acme.test']],
  URL: [['https://acme.test/x?y=1'], ['http://a.b']],
  TELEPHONE: [['+49 30 1234567'], ['(555) 123-4567']],
  SOCIAL_HANDLE: [['@ann_acme'], ['linkedin.com/in/ann']],
  SINGLE_SELECT: [['Hot']],
  MULTI_SELECT: [[['a', 'b']], [[]]],
  NUMBER: [[42], [-1.5], [0]],
  CURRENCY: [[1999.99], [0]],
  CHECKBOX: [[true], [false]],
  DATETIME: [
    ['2026-03-01T09:30:00Z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T10:30:00.5+01:00', '2026-03-01T09:30:00.500Z'],
  ],
  ADDRESS: [
    [
      { street: '1 Main St', city: 'Berlin', country: 'de', latitude: 52.5, longitude: 13.4 },
      { street: '1 Main St', city: 'Berlin', country: 'DE', latitude: 52.5, longitude: 13.4 },
    ],
    [{}],
  ],
  FULL_NAME: [[{ firstName: 'Ann', lastName: 'Lee' }], [{ lastName: 'Lee' }]],
};

const BAD: Record<ValueType, Array<[unknown, string]>> = {
  TEXT: [
    [1, ''],
    ['x'.repeat(10_001), ''],
    [['a'], ''],
  ],
  MARKDOWN: [[false, '']],
  EMAIL: [
    ['not an email', ''],
    ['a@b', ''],
    [3, ''],
  ],
  URL: [
    ['acme.test', ''],
    ['ftp://acme.test/x', ''],
    ['javascript:alert(1)', ''],
  ],
  TELEPHONE: [
    ['call me', ''],
    ['+', ''],
    [4930, ''],
  ],
  SOCIAL_HANDLE: [
    ['two words', ''],
    ['', ''],
  ],
  SINGLE_SELECT: [
    ['', ''],
    [['a'], ''],
  ],
  MULTI_SELECT: [
    ['a', ''],
    [['a', 2], '[1]'],
    [['a', 'a'], '[1]'],
    [['a', ''], '[1]'],
  ],
  NUMBER: [
    ['10', ''],
    [Number.NaN, ''],
    [Infinity, ''],
  ],
  CURRENCY: [
    ['$10', ''],
    [true, ''],
  ],
  CHECKBOX: [
    ['true', ''],
    [1, ''],
  ],
  DATETIME: [
    ['2026-03-01', ''],
    ['2026-03-01T09:30:00', ''],
    ['2026-13-01T09:30:00Z', ''],
    ['yesterday', ''],
    [1700000000, ''],
  ],
  ADDRESS: [
    ['Berlin', ''],
    [{ country: 'XX' }, '.country'],
    [{ country: 'DEU' }, '.country'],
    [{ latitude: 91 }, '.latitude'],
    [{ longitude: '13' }, '.longitude'],
    [{ city: 5 }, '.city'],
    [{ zip: '1' }, '.zip'],
    [[], ''],
  ],
  FULL_NAME: [
    ['Ann Lee', ''],
    [{ first: 'Ann' }, '.first'],
    [{ firstName: 1 }, '.firstName'],
  ],
};

test('all 14 value types are covered', () => {
  assert.deepEqual(Object.keys(GOOD).sort(), [...VALUE_TYPES].sort());
  assert.deepEqual(Object.keys(BAD).sort(), [...VALUE_TYPES].sort());
});

for (const type of VALUE_TYPES) {
  test(`${type}: accepts valid values (normalized) and null`, () => {
    for (const [value, normalized] of GOOD[type])
      assert.deepEqual(checkValue(type, value), normalized === undefined ? value : normalized, JSON.stringify(value));
    assert.equal(checkValue(type, null), null);
  });
  test(`${type}: refuses invalid values, naming the bad part`, () => {
    for (const [value, at] of BAD[type]) {
      assert.throws(
        () => checkValue(type, value),
        (err: unknown) => err instanceof InputError && err.param === at,
        `${type} ${JSON.stringify(value)} should be refused at "${at}"`,
      );
    }
  });
}
