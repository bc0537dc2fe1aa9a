// The values the filter model test (test/adversarial/filter-model.test.ts) writes and filters by:
// texts of every case and script with `%`, `_` and `\`, numbers, instants, selects, URLs, e-mail
// addresses in both spellings of their domain, telephone numbers; and the types it lists.
import fc from 'fast-check';
import type { Option, TypeModel, ValueType } from './filter-oracle.ts';

export type Kind = 'account' | 'contact' | 'task';
export const PLURAL: Record<Kind, string> = { account: 'accounts', contact: 'contacts', task: 'tasks' };
export type Gen = fc.GeneratorValue;

export const TEXTS = [
  'Acme',
  'ACME',
  'acme corp',
  'ＡＣＭＥ',
  'Ácme',
  'ΑΣΤΕΡΙΑ',
  'αστερια',
  'ΟΔΟΣ',
  'straße',
  'STRASSE',
  'ẞig',
  '100%',
  '100_',
  'a%b',
  'a_b',
  'a\\b',
  '😀 fun',
  'x😀y',
  'İzmir',
  'ﬁne',
  'Ωmega',
  "O'Hare",
  'zz',
];
export const MAYBE_BLANK = [...TEXTS, '', ' '];
export const NAMES = ['Ann', 'ANNA', 'Zoë', 'Σοφία', 'ß', '', 'de la Cruz', '李'];
export const URLS = [
  'https://Acme.com/Path',
  'http://bücher.example/%41',
  'https://x.y/a_b?q=1%',
  'HTTPS://ΑΣ.example/😀',
  'https://sub.xn--bcher-kva.example/',
  'https://ac.me/',
];
export const EMAILS = ['Ann@Bücher.example', 'ann@xn--bcher-kva.example', 'BOB@acme.test', 'x_y%z@acme.test', 'Ωx@ωmega.example', 'a@b.co'];
export const PHONES = ['+49301234567', '+14155552671', '+442071838750', '+33142685300'];
export const NUMS = [0, 3, 10, 12, -1.5, 10.5, 1e21, 1e-7];
export const DATES = ['2026-03-01T09:00:00.000Z', '2026-03-01T10:00:00+01:00', '2025-12-31T23:59:59.999Z', '2027-01-01T00:00:00Z', '2026-03-01T09:00:00.001Z'];
export const STATUSES = ['TODO', 'IN_PROGRESS', 'COMPLETE', 'CANCELLED'];
export const NUM_FILTERS = ['0', '3', '10', '10.0', '12', '-1.5', '1e21', '1e-7', '+3', '.5', '1,000', 'ten', ''];
export const DATE_FILTERS = [
  '2026-03-01T09:00:00Z',
  '2026-03-01T10:00:00+01:00',
  '2026-03-01T10:00:00 01:00',
  '2025-12-31T23:59:59.999Z',
  '2027-01-01T00:00:00.000Z',
  '2026-03-01',
  'soon',
];
export const NEEDLES = [
  '%',
  '_',
  '\\',
  'ß',
  'SS',
  'σ',
  'Σ',
  'ς',
  '😀',
  'xn--',
  'bücher',
  'BÜCH',
  '@',
  '.',
  'a',
  'Ac',
  'ΑΣ',
  'ａ',
  'fi',
  'i̇',
  '30',
  '+49',
  '4930 12',
  ' ',
];

export const CUSTOM: Record<string, ValueType> = {
  code: 'TEXT',
  seats: 'NUMBER',
  renews: 'DATETIME',
  vip: 'CHECKBOX',
  tier: 'SINGLE_SELECT',
  tags: 'MULTI_SELECT',
  site: 'URL',
  phone: 'TELEPHONE',
};
export const FIELDS: Record<Kind, Record<string, ValueType>> = {
  account: { $name: 'TEXT', $website: 'URL', $primaryAddress: 'ADDRESS', $headcount: 'SINGLE_SELECT', $industry: 'MULTI_SELECT', ...CUSTOM },
  contact: { $name: 'FULL_NAME', $email: 'EMAIL', $profilePhotoUrl: 'URL', ...CUSTOM },
  task: { $title: 'TEXT', $status: 'TEXT', $dueAt: 'DATETIME' },
};
export const LINK_AC = ['$account-contact', '$contact-account'];
export const LINK_AT = ['$task-account', '$account-task'];
export const RELATIONSHIPS: Record<Kind, TypeModel['relationships']> = {
  account: {
    $contact: { target: 'contact', slugs: LINK_AC },
    $task: { target: 'task', slugs: LINK_AT },
    $note: { target: 'note', slugs: ['$account-note', '$note-account'] },
    $opportunity: { target: 'opportunity', slugs: ['$account-opportunity'] },
  },
  contact: { $account: { target: 'account', slugs: LINK_AC }, $note: { target: 'note', slugs: ['$note-contact'] } },
  task: { $account: { target: 'account', slugs: LINK_AT }, $assignedTo: { target: 'member', slugs: ['$task-assignedTo'] } },
};
export const BAD_KEYS = ['$bogus', '$meeting', '$contact-task', 'tags', '$industry', '$a-b-c'];

/** A value of a field as a write sends it. */
export function value(g: Gen, vt: ValueType, key: string, options: Option[]): unknown {
  const pick = <T>(xs: readonly T[]) => g(fc.constantFrom, ...xs);
  switch (vt) {
    case 'TEXT':
      return key === 'code' ? pick(MAYBE_BLANK) : key === '$status' ? pick(STATUSES) : pick(TEXTS);
    case 'FULL_NAME':
      // At least one part not blank, as a write requires.
      return g(() =>
        fc.oneof(
          fc.record({ firstName: fc.constantFrom(...NAMES.filter((x) => x !== '')), lastName: fc.constantFrom(...NAMES) }, { requiredKeys: ['firstName'] }),
          fc.record({ firstName: fc.constantFrom(...NAMES), lastName: fc.constantFrom(...NAMES.filter((x) => x !== '')) }, { requiredKeys: ['lastName'] }),
        ),
      );
    case 'ADDRESS':
      return g(() =>
        fc.record(
          {
            street: fc.constantFrom(...MAYBE_BLANK),
            city: fc.constantFrom(...TEXTS),
            state: fc.constantFrom(...MAYBE_BLANK),
            country: fc.constantFrom('DE', 'GR'),
          },
          { requiredKeys: [] },
        ),
      );
    case 'NUMBER':
      return pick(NUMS);
    case 'DATETIME':
      return pick(DATES);
    case 'CHECKBOX':
      return g(fc.boolean);
    case 'SINGLE_SELECT': {
      const o = pick(options);
      return g(fc.boolean) ? o.id : o.label;
    }
    case 'MULTI_SELECT':
      return g(() =>
        fc.subarray(
          options.map((o) => o.id),
          { maxLength: 2 },
        ),
      );
    case 'URL':
      return key === '$website' ? g(() => fc.subarray(URLS, { maxLength: 3 })) : pick(URLS);
    case 'EMAIL':
      return g(() => fc.subarray(EMAILS, { maxLength: 3 }));
    case 'TELEPHONE':
      return pick(PHONES);
  }
}

/** A filter value for `key` with operator `op`: mostly a part of a text `held` (a stored one), else one of the lists. */
export function valueFor(g: Gen, held: readonly string[], key: string, vt: ValueType, op: string, options: Option[]): string {
  const pick = <T>(xs: readonly T[]) => xs[g(() => fc.nat(xs.length - 1))]!;
  switch (vt) {
    case 'NUMBER':
      return pick(NUM_FILTERS);
    case 'DATETIME':
      return pick(DATE_FILTERS);
    case 'CHECKBOX':
      return pick(['true', 'false', 'TRUE', '1']);
    case 'SINGLE_SELECT':
    case 'MULTI_SELECT': {
      if (options.length === 0) return 'x';
      const o = pick(options);
      return pick([o.id, o.label, `  ${o.label.toUpperCase().replace(/ /g, '   ')} `, o.label.toLowerCase(), 'nope']);
    }
    default: {
      // A part of a text some record holds (in a changed case now and then), or a needle of the list.
      if (held.length === 0 || g(() => fc.nat(3)) === 0) return pick([...NEEDLES, '']);
      const cps = Array.from(pick(held));
      const from = op === 'contains' ? g(() => fc.nat(Math.max(0, cps.length - 1))) : 0;
      const len = op === 'equal' || op === '' ? cps.length : g(() => fc.integer({ min: 1, max: 4 }));
      const part = cps.slice(from, from + len).join('');
      return pick([part, part, part.toUpperCase(), part.toLowerCase(), part.normalize('NFKD')]);
    }
  }
}

/** The texts of a stored value a needle may be cut from (as written, not folded). */
export function rawTexts(vt: ValueType, v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (vt === 'FULL_NAME') {
    const o = v as Record<string, string>;
    return [[o.firstName, o.lastName].filter((x) => x).join(' ')].filter((x) => x !== '');
  }
  if (vt === 'ADDRESS') return Object.values(v as Record<string, string>).filter((x) => typeof x === 'string' && x !== '');
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' && v !== '' ? [v] : [];
}
