// Operations for the dialect parity test (test/api/dialect-parity.test.ts): a generated sequence
// of API calls with awkward values, run on a workspace of each database, and the normalisation of
// the answers (ids by order of appearance, server times as `T`) so that they compare equal.
import fc from 'fast-check';

export const SLUG = 'gadget';
export const TYPES = ['account', 'contact', 'opportunity', 'task', 'note', SLUG] as const;
export type Kind = (typeof TYPES)[number];

export const PATHS: Record<Kind, string> = {
  account: '/v1/accounts',
  contact: '/v1/contacts',
  opportunity: '/v1/opportunities',
  task: '/v1/tasks',
  note: '/v1/notes',
  [SLUG]: `/v1/objects/${SLUG}/values`,
};
export const LIST_PATHS: Record<Kind, string> = { ...PATHS, [SLUG]: `/v1/objects/${SLUG}` };

export const TEXTS = [
  '',
  ' ',
  'é',
  'É',
  'e\u0301',
  'ΑΣ',
  'ας',
  'ß',
  'ẞ',
  'İ',
  'ı',
  'ＡＣＭＥ',
  'acme',
  'Acme',
  'ACME',
  '%',
  '_',
  "O'Hare",
  '😀',
  'a\u0000b',
  '\ud800',
  'x'.repeat(300),
];
export const NUMBERS = [0, -0, 1, -1, 0.1, 1.5, 1e-7, 1e21, 2 ** 53, -(2 ** 53) - 2, 9007199254740991, 1.7976931348623157e308, 5e-324, 0.30000000000000004];
export const DATES = [
  '1970-01-01T00:00:00.000Z',
  '1969-12-31T23:59:59.999Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '2000-02-29T12:00:00+14:00',
  '2000-02-29T12:00:00-12:00',
  '2026-03-01T10:00:00+01:00',
  '2026-03-01T09:00:00Z',
  '2026-03-01T09:00:00.0001Z',
];

const text = fc.constantFrom(...TEXTS);
// Names a create needs: mostly ones it takes (awkward all the same), sometimes ones it refuses.
const name = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...TEXTS.slice(2, 18)) }, { weight: 1, arbitrary: text });
const num = fc.constantFrom(...NUMBERS);
const date = fc.constantFrom(...DATES);
const ref = fc.nat(7);

/** Field values a type takes, keyed by field; each generated value may also be null. */
const FIELDS: Record<Kind, Record<string, fc.Arbitrary<unknown>>> = {
  account: { $name: text, seats: num, renews: date, $website: fc.constantFrom(['acme.com'], ['https://ÉXAMPLE.com/x'], []) },
  contact: { $name: fc.record({ firstName: text, lastName: text }), $email: fc.constantFrom(['a@acme.com'], ['É@Acme.com'], ['x@y.z', 'X@Y.Z'], []) },
  opportunity: { $name: text },
  task: { $title: text, $status: fc.constantFrom('TODO', 'COMPLETE', 'IN_PROGRESS', 'todo', ''), $dueAt: date },
  note: { $title: text, $content: text },
  [SLUG]: { name: text, seats: num, renews: date, vip: fc.boolean(), tier: fc.constantFrom('Gold', 'gold', 'GÖLD', 'Silver') },
};
/** What a create must hold; generated apart from the optional fields so most creates succeed. */
const REQUIRED: Partial<Record<Kind, Record<string, fc.Arbitrary<unknown>>>> = {
  account: { $name: name },
  opportunity: { $name: name, $stage: fc.constantFrom('Lead', 'Closed won', 'Qualified') },
  task: { $title: name, $status: fc.constantFrom('TODO', 'COMPLETE', 'IN_PROGRESS') },
  note: { $title: name },
  [SLUG]: { name },
};
const RELS: Partial<Record<Kind, Record<string, Kind | 'member'>>> = {
  contact: { $account: 'account' },
  opportunity: { $account: 'account', $champion: 'contact' },
  task: { $account: 'account', $opportunity: 'opportunity', $assignedTo: 'member' },
  note: { $account: 'account', $contact: 'contact' },
  [SLUG]: { owner_account: 'account' },
};
const FILTERS: Record<Kind, [string, string[], fc.Arbitrary<unknown>][]> = {
  account: [
    ['$name', ['equal', 'startsWith', '-equal', '-startsWith'], text],
    ['seats', ['equal', 'greaterThan', 'lessThanOrEqual', '-greaterThanOrEqual'], num],
    ['renews', ['equal', 'greaterThanOrEqual', 'lessThan', '-equal'], date],
    ['$website', ['contains', '-contains'], fc.constantFrom('acme', 'ÉX', 'é', 'x/')],
  ],
  contact: [
    ['$name', ['equal', 'startsWith'], text],
    ['$email', ['contains', '-contains'], fc.constantFrom('a@', 'É', 'acme.com', 'y.z')],
  ],
  opportunity: [['$name', ['equal', 'startsWith', '-startsWith'], text]],
  task: [
    ['$status', ['equal', '-equal'], fc.constantFrom('TODO', 'todo', 'COMPLETE', 'IN_PROGRESS')],
    ['$dueAt', ['greaterThan', 'lessThanOrEqual'], date],
  ],
  note: [['$title', ['equal', 'startsWith'], text]],
  [SLUG]: [
    ['name', ['equal', 'startsWith', '-equal'], text],
    ['seats', ['greaterThan', 'lessThan', '-lessThan'], num],
    ['tier', ['equal', '-equal'], fc.constantFrom('Gold', 'gold', 'GÖLD', 'göld', 'Silver')],
    ['vip', ['equal'], fc.boolean()],
  ],
};

const fieldsOf = (kind: Kind) =>
  fc
    .dictionary(fc.constantFrom(...Object.keys(FIELDS[kind])), fc.constant(null), { maxKeys: 3 })
    .chain((keys) => fc.record(Object.fromEntries(Object.keys(keys).map((k) => [k, fc.option(FIELDS[kind][k] as fc.Arbitrary<unknown>, { freq: 6 })]))));
const relsOf = (kind: Kind) =>
  fc
    .subarray(Object.keys(RELS[kind] ?? {}))
    .chain((keys) => fc.record(Object.fromEntries([...new Set([...keys, ...(MUST_LINK[kind] ?? [])])].map((k) => [k, ref]))));
const MUST_LINK: Partial<Record<Kind, string[]>> = { opportunity: ['$account'], task: ['$assignedTo'] };
const createOf = (k: Kind) =>
  fc.record({
    op: fc.constant('create' as const),
    kind: fc.constant(k),
    fields: fc.tuple(fc.record(REQUIRED[k] ?? {}), fieldsOf(k)).map(([a, b]) => ({ ...a, ...b })),
    rels: relsOf(k),
  });
const kind = fc.constantFrom(...TYPES);
const filterOf = (k: Kind) =>
  fc.constantFrom(...FILTERS[k]).chain(([key, ops, value]) => fc.record({ key: fc.constant(key), op: fc.constantFrom(...ops), value: value.map(String) }));

export type Op =
  | { op: 'create'; kind: Kind; fields: Record<string, unknown>; rels: Record<string, number> }
  | { op: 'update'; kind: Kind; ref: number; fields: Record<string, unknown> }
  | { op: 'delete' | 'restore' | 'get'; kind: Kind; ref: number }
  | { op: 'list'; kind: Kind; filters: { key: string; op: string; value: string }[]; limit: number; offset: number }
  | { op: 'history'; kind: Kind; ref: number; field: string; limit: number }
  | { op: 'merge'; kind: Kind; ref: number; other: number }
  | { op: 'listCreate'; kind: Kind; name: string; members: number[] }
  | { op: 'listUpdate'; ref: number; name: string | null; add: number[]; remove: number[] }
  | { op: 'listMembers'; ref: number; limit: number; offset: number }
  | { op: 'link'; kind: Kind; ref: number; key: string; how: 'add' | 'remove' | 'replace'; others: number[] }
  | { op: 'linked'; kind: Kind; key: string; ref: number; negate: boolean }
  | { op: 'lists' | 'listDelete'; ref: number }
  | { op: 'mergeWith'; kind: Kind; ref: number; other: number; field: string; pick: 'primary' | 'duplicate' };

const HISTORY_KINDS: Kind[] = ['account', 'contact', 'opportunity', SLUG];
const LIST_KINDS: Kind[] = ['account', 'contact', 'opportunity'];

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: kind.chain(createOf) },
  { weight: 3, arbitrary: kind.chain((k) => fc.record({ op: fc.constant('update' as const), kind: fc.constant(k), ref, fields: fieldsOf(k) })) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('delete' as const, 'restore' as const, 'get' as const), kind, ref }) },
  {
    weight: 3,
    arbitrary: kind.chain((k) =>
      fc.record({
        op: fc.constant('list' as const),
        kind: fc.constant(k),
        filters: fc.array(filterOf(k), { maxLength: 2 }),
        limit: fc.integer({ min: 1, max: 4 }),
        offset: fc.nat(3),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...HISTORY_KINDS).chain((k) =>
      fc.record({
        op: fc.constant('history' as const),
        kind: fc.constant(k),
        ref,
        field: fc.constantFrom(...Object.keys(FIELDS[k])),
        limit: fc.integer({ min: 1, max: 3 }),
      }),
    ),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('merge' as const), kind: fc.constantFrom(...HISTORY_KINDS), ref, other: ref }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('listCreate' as const),
      kind: fc.constantFrom(...LIST_KINDS),
      name: text,
      members: fc.array(ref, { maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('listUpdate' as const),
      ref,
      name: fc.option(text),
      add: fc.array(ref, { maxLength: 2 }),
      remove: fc.array(ref, { maxLength: 2 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(...(Object.keys(RELS) as Kind[])).chain((k) =>
      fc.record({
        op: fc.constant('link' as const),
        kind: fc.constant(k),
        ref,
        key: fc.constantFrom(...Object.keys(RELS[k] ?? {})),
        how: fc.constantFrom('add' as const, 'remove' as const, 'replace' as const),
        others: fc.array(ref, { maxLength: 2 }),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(...(Object.keys(RELS) as Kind[]))
      .chain((k) =>
        fc.record({ op: fc.constant('linked' as const), kind: fc.constant(k), key: fc.constantFrom(...Object.keys(RELS[k] ?? {})), ref, negate: fc.boolean() }),
      ),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('lists' as const, 'listDelete' as const), ref }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...HISTORY_KINDS).chain((k) =>
      fc.record({
        op: fc.constant('mergeWith' as const),
        kind: fc.constant(k),
        ref,
        other: ref,
        field: fc.constantFrom(...Object.keys(FIELDS[k])),
        pick: fc.constantFrom('primary' as const, 'duplicate' as const),
      }),
    ),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('listMembers' as const), ref, limit: fc.integer({ min: 1, max: 3 }), offset: fc.nat(2) }) },
);

/** A sequence: a few creates first, so that the operations after them have records to name. */
export const sequenceArb: fc.Arbitrary<Op[]> = fc
  .tuple(createOf('account'), fc.array(kind.chain(createOf), { minLength: 3, maxLength: 8 }), fc.array(opArb, { minLength: 1, maxLength: 14 }))
  .map(([first, a, b]) => [first, ...a, ...b]);

export const RELATED = RELS;

const ID = /\b(?:ws|usr|key|lst|acc|con|opp|tsk|nte|rec|mrg|opt|fld|rld|evt|fil|mtg)_[0-9a-z]{26}\b/g;
// The times the server stamps (a field's value never sits under these keys).
const SERVER_TIMES = new Set(['createdAt', 'updatedAt', 'recordedAt', 'deletedAt', 'completedAt']);

/**
 * Replaces ids, and the server's times, by their order of appearance: the same id or instant reads
 * the same wherever it appears (an update that changes nothing keeps `updatedAt`), and every
 * operation runs in a millisecond of its own (the test waits), so equal instants mean the same.
 */
export function normaliser(): (v: unknown) => unknown {
  const seen = new Map<string, string>();
  const times = new Map<string, string>();
  const walk = (v: unknown, key?: string): unknown => {
    if (typeof v === 'string') {
      if (key !== undefined && SERVER_TIMES.has(key)) {
        if (!times.has(v)) times.set(v, `T#${times.size}`);
        return times.get(v);
      }
      if (key === 'nextCursor') return 'cursor';
      if (key === 'requestId') return 'req';
      return v.replace(ID, (id) => {
        if (!seen.has(id)) seen.set(id, `${id.slice(0, id.indexOf('_'))}#${seen.size}`);
        return seen.get(id) as string;
      });
    }
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk;
}
