// Every valueType of docs/design.md §Record values accepts what it should, normalizes what it may,
// and refuses the rest with the path of the bad part.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VALUE_TYPES, type ValueType } from '../../src/lib/resource-schemas.ts';
import { InputError } from '../../src/lib/errors.ts';
import type { HandleService } from '../../src/definitions/catalogue.ts';
import { checkValue } from '../../src/records/values.ts';

const GOOD: Record<ValueType, Array<[unknown, unknown?]>> = {
  TEXT: [['hello'], ['']],
  MARKDOWN: [['# Title\n\n*x*']],
  EMAIL: [['ann@acme.test']],
  URL: [['https://acme.test/x?y=1'], ['http://a.b']],
  // E.164 (docs/records.md §Telephone numbers); a field without a service keeps a handle as written.
  TELEPHONE: [
    ['+49 30 1234567', '+49301234567'],
    ['+1 (202) 555-0123', '+12025550123'],
  ],
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
    [{ city: 'Berlin' }],
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
    // A national number needs a default country; none is given here.
    ['(202) 555-0123', ''],
    ['030 1234567', ''],
    ['+1 555 0100', ''],
    ['call +49 30 1234567 now', ''],
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
    [{}, ''],
    [{ street: ' ', city: null }, ''],
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

test('TELEPHONE: E.164 with ;ext=, national numbers read in the default country, invalid numbers refused', () => {
  const cases: [string, string | null, string | null][] = [
    ['+49 30 1234567', null, '+49301234567'],
    ['030 1234567', 'DE', '+49301234567'],
    ['+49 (0)30 123-4567', 'US', '+49301234567'],
    ['(202) 555-0123', 'US', '+12025550123'],
    ['+1 202 555 0123 x100', null, '+12025550123;ext=100'],
    ['+1 202 555 0123 ext:100', null, '+12025550123;ext=100'],
    ['+1 202 555 0123 #100', null, '+12025550123;ext=100'],
    ['+12025550123;ext=100', null, '+12025550123;ext=100'],
    ['tel:+44-20-7946-0958', null, '+442079460958'],
    ['030 1234567', null, null],
    ['12', 'DE', null],
    ['+49 30', null, null],
    ['+1 555 0100', 'US', null],
  ];
  for (const [text, defaultCountry, want] of cases) {
    if (want !== null) assert.equal(checkValue('TELEPHONE', text, { defaultCountry }), want, `${text} in ${defaultCountry}`);
    else assert.throws(() => checkValue('TELEPHONE', text, { defaultCountry }), InputError, `${text} in ${defaultCountry}`);
  }
});

test("SOCIAL_HANDLE: a profile URL of the field's service or a bare handle, stored as the profile URL", () => {
  const cases: [HandleService, string, string | null][] = [
    ['LINKEDIN', 'ann-lee', 'https://linkedin.com/in/ann-lee'],
    ['LINKEDIN', '@ann-lee', 'https://linkedin.com/in/ann-lee'],
    ['LINKEDIN', 'https://www.linkedin.com/in/ann-lee/', 'https://linkedin.com/in/ann-lee'],
    ['LINKEDIN', 'uk.linkedin.com/in/ann-lee?trk=x', 'https://linkedin.com/in/ann-lee'],
    ['LINKEDIN', 'https://linkedin.com/company/acme', 'https://linkedin.com/company/acme'],
    ['LINKEDIN', 'https://x.com/ann', null],
    ['LINKEDIN', 'https://linkedin.com/feed/', null],
    ['TWITTER', '@ann_lee', 'https://x.com/ann_lee'],
    ['TWITTER', 'https://twitter.com/ann_lee', 'https://x.com/ann_lee'],
    ['TWITTER', 'https://mobile.x.com/ann_lee?s=20', 'https://x.com/ann_lee'],
    ['TWITTER', 'a.b', null],
    ['TWITTER', 'way_too_long_for_x', null],
    ['FACEBOOK', 'ann.lee', 'https://facebook.com/ann.lee'],
    ['FACEBOOK', 'https://m.facebook.com/ann.lee', 'https://facebook.com/ann.lee'],
    ['FACEBOOK', 'https://www.facebook.com/profile.php?id=1234', 'https://facebook.com/profile.php?id=1234'],
    ['FACEBOOK', 'https://facebook.com.evil.test/ann', null],
    ['INSTAGRAM', 'ann.lee_', 'https://www.instagram.com/ann.lee_'],
    ['INSTAGRAM', 'instagram.com/ann.lee_', 'https://www.instagram.com/ann.lee_'],
    ['INSTAGRAM', 'two words', null],
    ['INSTAGRAM', 'javascript:alert(1)', null],
  ];
  for (const [handleService, text, want] of cases) {
    if (want !== null) assert.equal(checkValue('SOCIAL_HANDLE', text, { handleService }), want, `${handleService} ${text}`);
    else assert.throws(() => checkValue('SOCIAL_HANDLE', text, { handleService }), InputError, `${handleService} ${text}`);
  }
});
