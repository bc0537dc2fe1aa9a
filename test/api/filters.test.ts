// List filtering (docs/filtering.md) on both databases, against the module: every operator ×
// valueType pair answers exactly what a full scan in the test finds (or invalid_parameter naming
// the key), with negation, Unicode folding, DATETIME offsets, decimals, several filters, pages and
// an exact totalCount, relationship filters, and hostile keys and values.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Executor } from '../../src/db/types.ts';
import { addField, addOption, loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { filteredPage, parseFilters, planFilters } from '../../src/records/filter/service.ts';
import { fieldHash, trigramKey } from '../../src/records/index/trigrams.ts';
import { type Ctx, operatorCtx } from '../../src/lib/context.ts';
import { AppError } from '../../src/lib/errors.ts';
import { foldText } from '../../src/lib/fold.ts';
import { matches, type Op, writeRecord, type Written } from '../helpers/filters-fixtures.ts';
import { newestFirst } from '../helpers/order.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';

const OPS: Op[] = ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual', 'startsWith', 'contains'];
const RANGE: Op[] = ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual'];
// The contract's table of operators per valueType, written out independently of the module.
const ALLOWED: Record<string, Op[]> = {
  NUMBER: RANGE,
  CURRENCY: RANGE,
  DATETIME: RANGE,
  TEXT: ['equal', 'startsWith'],
  FULL_NAME: ['equal', 'startsWith'],
  SOCIAL_HANDLE: ['equal', 'startsWith'],
  ADDRESS: ['equal', 'startsWith'],
  CHECKBOX: ['equal'],
  SINGLE_SELECT: ['equal'],
  EMAIL: ['contains'],
  TELEPHONE: ['contains'],
  URL: ['contains'],
  MULTI_SELECT: [],
  MARKDOWN: [],
};

const NAMES = ['Acme', 'ACME', 'Acme Corp', 'acme%_corp', 'Ａｃｍｅ', 'İstanbul Ltd', 'Straße AG', 'Zeta', "O'Brien'); drop table records;--", 'back\\slash'];
const CITIES = ['Berlin', 'berlin', 'İstanbul', 'Zürich', 'Köln'];
const BASE = Date.parse('2026-01-01T00:00:00.000Z');

async function workspace(ctx: () => { deps: { db: { kysely: Executor } } } & Parameters<typeof seedWorkspace>[0]) {
  const t = ctx();
  const c = operatorCtx(t.deps.db.kysely, (await seedWorkspace(t)).workspaceId);
  return c;
}

/** Accounts with a value of every kind, some unset, created three per second (ties by id). */
async function seedAccounts(c: Ctx): Promise<{ defs: TypeDefinitions; all: Written[]; labels: Map<string, string> }> {
  for (const [key, valueType, extra] of [
    ['seats', 'NUMBER', {}],
    ['arr', 'CURRENCY', { currency: 'EUR' }],
    ['signed', 'DATETIME', {}],
    ['active', 'CHECKBOX', {}],
    ['phone', 'TELEPHONE', { multipleValues: true }],
    ['mail', 'EMAIL', {}],
    ['founder', 'FULL_NAME', {}],
    ['memo', 'MARKDOWN', {}],
  ] as const)
    await addField(c, { objectType: 'account', key, label: key, valueType, ...extra });
  await addField(c, { objectType: 'account', key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
  await addOption(c, { objectType: 'account', fieldKey: 'tier', label: 'Gold' });
  await addOption(c, { objectType: 'account', fieldKey: 'tier', label: 'Silver' });
  const defs = (await loadDefinitions(c, { objectType: 'account' }))!;
  const tiers = defs.fields.get('tier')!.options!;
  const industries = defs.fields.get('$industry')!.options!;
  const headcounts = defs.fields.get('$headcount')!.options!;
  const funding = defs.fields.get('$lastFundingType')!.options!;
  const labels = new Map([...tiers, ...headcounts, ...funding].map((o) => [o.id, o.label]));
  const all: Written[] = [];
  for (let i = 0; i < 60; i++) {
    const values: Record<string, unknown> = {
      $name: NAMES[i % NAMES.length],
      $website: i % 4 === 0 ? [] : i % 4 === 1 ? [`https://site${i % 7}.example`, `http://ACME-${i % 3}.test/a_b%c`] : [`https://site${i % 7}.example`],
      $industry: [industries[i % 3]!.id],
      // Social handles as they are stored: profile URLs (docs/records.md §Social handles).
      $linkedIn: `https://linkedin.com/in/Handle${i % 5}`,
      $twitter: `https://x.com/tw${i % 4}`,
      $facebook: `https://facebook.com/fb.${i % 3}`,
      $instagram: `https://www.instagram.com/Insta_${i % 2}`,
      $headcount: headcounts[i % 4]!.id,
      $lastFundingType: funding[i % 5]!.id,
      $accountStatus: i % 2 === 0 ? 'Active' : 'Churned',
      $howTheyMakeMoney: 'Selling widgets',
      tier: i % 5 === 4 ? null : tiers[i % 2]!.id,
      seats: i % 9 === 8 ? null : (i % 13) * 1.5,
      arr: [0.3, 19.99, 1000.25, 0.1][i % 4],
      signed: i % 6 === 5 ? null : new Date(BASE + (i % 10) * 3_600_000).toISOString(),
      active: i % 3 === 2 ? null : i % 3 === 0,
      phone: [`+4930123456${i % 10}`],
      mail: i % 7 === 6 ? null : `User${i}@Acme${i % 4}.test`,
      founder: { firstName: i % 2 === 0 ? 'Ann' : 'İlker', lastName: i % 3 === 0 ? 'Öster' : 'STRAẞER' },
      memo: 'note',
      $primaryAddress: i % 5 === 3 ? null : { street: 'Hauptstraße 1', city: CITIES[i % CITIES.length], country: 'DE' },
    };
    for (const k of Object.keys(values)) if (values[k] === null) delete values[k];
    const id = `acc_${String(i).padStart(3, '0')}`;
    all.push(await writeRecord(c.db, defs, c.actor.workspaceId, { id, createdAt: new Date(BASE + Math.floor(i / 3) * 1000).toISOString(), values }));
  }
  return { defs, all, labels };
}

async function rejects(c: Ctx, defs: TypeDefinitions, query: Record<string, unknown>, param: string) {
  await assert.rejects(
    async () => filteredPage(c, { defs, filters: parseFilters(query, defs), page: { limit: 25, offset: 0 } }),
    (e: unknown) => e instanceof AppError && e.code === 'invalid_parameter' && e.param === param,
    `${JSON.stringify(query)} → invalid_parameter ${param}`,
  );
}

/** The module's answer equals the full scan's, on the first page and on a later one. */
async function agrees(c: Ctx, defs: TypeDefinitions, all: Written[], query: Record<string, unknown>, pred: (w: Written) => boolean) {
  const want = all.filter(pred).sort(newestFirst);
  const filters = parseFilters(query, defs);
  for (const page of [
    { limit: 25, offset: 0 },
    { limit: 7, offset: 7 },
  ]) {
    const got = await filteredPage(c, { defs, filters, page });
    assert.equal(got.totalCount, want.length, `${JSON.stringify(query)} totalCount`);
    assert.deepEqual(
      got.ids,
      want.slice(page.offset, page.offset + page.limit).map((w) => w.id),
      `${JSON.stringify(query)} page ${page.offset}`,
    );
  }
  return want.length;
}

eachDialect('filters', (ctx) => {
  let c: Ctx;
  let defs: TypeDefinitions;
  let all: Written[];
  let labels: Map<string, string>;
  before(async () => {
    c = await workspace(ctx);
    ({ defs, all, labels } = await seedAccounts(c));
  });

  test('every operator × valueType: allowed pairs answer what a full scan finds, others are refused', async () => {
    const sample = all[10]!;
    for (const def of defs.fields.values()) {
      const rows = sample.rows.filter((r) => r.field === def.key);
      for (const op of OPS) {
        const param = `${def.key}[${op}]`;
        if (!(ALLOWED[def.valueType] ?? []).includes(op)) {
          await rejects(c, defs, { [param]: 'x' }, param);
          continue;
        }
        const row = rows[0];
        assert.ok(row, `sample has a value for ${def.key}`);
        let value: string;
        let oracle: string | number;
        if (def.valueType === 'DATETIME') [value, oracle] = [new Date(row.value_num!).toISOString(), row.value_num!];
        else if (row.value_num !== null)
          [value, oracle] = def.valueType === 'CHECKBOX' ? [String(row.value_num === 1), row.value_num] : [String(row.value_num), row.value_num];
        else if (def.valueType === 'SINGLE_SELECT') [value, oracle] = [labels.get(row.value_text!) ?? row.value_text!, row.value_text!];
        else {
          const text = row.value_text!;
          const part = op === 'startsWith' ? text.slice(0, 3) : op === 'contains' ? text.slice(2, 7) : text;
          // Upper case where folding brings it back (ß upper-cases to SS, which folds to ss).
          value = foldText(part.toUpperCase()) === part ? part.toUpperCase() : part;
          oracle = value;
        }
        const n = await agrees(c, defs, all, { [param]: value }, (w) => matches(w, def.key, op, oracle));
        const m = await agrees(c, defs, all, { [`${def.key}[-${op}]`]: value }, (w) => !matches(w, def.key, op, oracle));
        // The sample's own value matches itself; a bound at its value leaves records on one side.
        if (op === 'greaterThan' || op === 'lessThan') assert.ok(m > 0, `${def.key}[-${op}]=${value} matches something`);
        else assert.ok(n > 0, `${param}=${value} matches something`);
      }
    }
  });

  test('the default operator is equal where allowed, else contains; multi-select and markdown are not filterable', async () => {
    await agrees(c, defs, all, { $name: 'acme' }, (w) => matches(w, '$name', 'equal', 'acme'));
    await agrees(c, defs, all, { mail: 'ACME2' }, (w) => matches(w, 'mail', 'contains', 'acme2'));
    await rejects(c, defs, { $industry: 'Software' }, '$industry');
    await rejects(c, defs, { memo: 'note' }, 'memo');
  });

  test('Unicode folding: full-width, dotted capital I, capital sharp s', async () => {
    const acme = await agrees(c, defs, all, { '$name[equal]': 'ACME' }, (w) => ['Acme', 'ACME', 'Ａｃｍｅ'].some((n) => rawName(w) === n));
    assert.equal(acme, 18);
    await agrees(c, defs, all, { '$name[startsWith]': 'İSTANBUL' }, (w) => rawName(w) === 'İstanbul Ltd');
    assert.ok((await agrees(c, defs, all, { '$name[equal]': 'STRAẞE AG' }, (w) => rawName(w) === 'Straße AG')) > 0);
    assert.ok(
      (await agrees(c, defs, all, { 'founder[startsWith]': 'ann str' }, (w) => w.rows.some((r) => r.field === 'founder' && r.value_text === 'ann straßer'))) >
        0,
    );
    await agrees(c, defs, all, { '$primaryAddress[equal]': 'BERLIN' }, (w) => w.rows.some((r) => r.field === '$primaryAddress' && r.value_text === 'berlin'));
  });

  test('DATETIME compares instants whatever the offset; a value without a zone is refused', async () => {
    const at = BASE + 3 * 3_600_000;
    const inBerlin = '2026-01-01T04:00:00+01:00';
    const n = await agrees(c, defs, all, { 'signed[equal]': inBerlin }, (w) => matches(w, 'signed', 'equal', at));
    assert.ok(n > 0);
    // `+` unencoded in a query string arrives as a space.
    await agrees(c, defs, all, { 'signed[equal]': '2026-01-01T04:00:00 01:00' }, (w) => matches(w, 'signed', 'equal', at));
    await agrees(c, defs, all, { 'signed[greaterThan]': '2026-01-01T00:30:00-02:00' }, (w) => matches(w, 'signed', 'greaterThan', BASE + 2.5 * 3_600_000));
    await rejects(c, defs, { 'signed[equal]': '2026-01-01T04:00:00' }, 'signed[equal]');
    await rejects(c, defs, { 'signed[lessThan]': 'yesterday' }, 'signed[lessThan]');
  });

  test('CURRENCY and NUMBER as decimals; ranges from repeated keys; inclusive bounds by negation', async () => {
    assert.equal(await agrees(c, defs, all, { arr: '0.3' }, (w) => matches(w, 'arr', 'equal', 0.3)), 15);
    // `+` unencoded in a query string arrives as a space, in a sign or an exponent.
    assert.equal(await agrees(c, defs, all, { arr: ' 0.3' }, (w) => matches(w, 'arr', 'equal', 0.3)), 15);
    assert.ok((await agrees(c, defs, all, { 'arr[lessThan]': '1e 21' }, (w) => matches(w, 'arr', 'lessThan', 1e21))) > 0);
    await agrees(c, defs, all, { 'arr[greaterThan]': '19.98', 'arr[lessThan]': '1000.25' }, (w) => matches(w, 'arr', 'equal', 19.99));
    await agrees(
      c,
      defs,
      all,
      { 'seats[greaterThan]': ['3', '4'], 'seats[-lessThan]': '6' },
      (w) => matches(w, 'seats', 'greaterThan', 4) && !matches(w, 'seats', 'lessThan', 6),
    );
    await agrees(
      c,
      defs,
      all,
      { 'seats[-greaterThan]': '6', 'seats[-lessThan]': '3' },
      (w) => !matches(w, 'seats', 'greaterThan', 6) && !matches(w, 'seats', 'lessThan', 3),
    );
    // A number as the API writes it, with an exponent, reads as that number.
    await agrees(
      c,
      defs,
      all,
      { 'seats[greaterThan]': '4e0', 'seats[-greaterThan]': '0.6E+1' },
      (w) => matches(w, 'seats', 'greaterThan', 4) && !matches(w, 'seats', 'greaterThan', 6),
    );
    for (const bad of ['1e', '12,5', 'NaN', 'Infinity', '0x10', ' ', '1.2.3', '1e400']) await rejects(c, defs, { 'seats[equal]': bad }, 'seats[equal]');
    await rejects(c, defs, { 'active[equal]': 'yes' }, 'active[equal]');
    await rejects(c, defs, { tier: 'Bronze' }, 'tier');
  });

  test('several filters combine with AND; an unset field never matches, and always matches negated', async () => {
    const q = { 'mail[contains]': 'acme1', 'active[equal]': 'true', '$name[-startsWith]': 'acme', 'tier[-equal]': 'Gold' };
    const gold = [...labels].find(([, l]) => l === 'Gold')![0];
    await agrees(
      c,
      defs,
      all,
      q,
      (w) =>
        matches(w, 'mail', 'contains', 'acme1') &&
        matches(w, 'active', 'equal', 1) &&
        !matches(w, '$name', 'startsWith', 'acme') &&
        !matches(w, 'tier', 'equal', gold),
    );
    const unsetTier = all.filter((w) => !w.rows.some((r) => r.field === 'tier')).length;
    assert.ok(unsetTier > 0);
    const notGold = await agrees(c, defs, all, { 'tier[-equal]': gold }, (w) => !matches(w, 'tier', 'equal', gold));
    const isGold = await agrees(c, defs, all, { tier: gold }, (w) => matches(w, 'tier', 'equal', gold));
    assert.equal(notGold + isGold, all.length);
    // A multi-valued field matches when any value does; negated, when none does.
    await agrees(c, defs, all, { '$website[-contains]': 'site3' }, (w) => !matches(w, '$website', 'contains', 'site3'));
  });

  test('pages and totalCount agree with a full scan at every offset', async () => {
    const filters = parseFilters({ 'seats[greaterThan]': '1' }, defs);
    const want = all.filter((w) => matches(w, 'seats', 'greaterThan', 1)).sort(newestFirst);
    for (let offset = 0; offset <= want.length + 5; offset += 4) {
      const got = await filteredPage(c, { defs, filters, page: { limit: 4, offset } });
      assert.equal(got.totalCount, want.length);
      assert.deepEqual(
        got.ids,
        want.slice(offset, offset + 4).map((w) => w.id),
      );
    }
  });

  test('a page whose matches are all old records agrees with a full scan (the walk from the newest gives up and sorts)', async () => {
    const w = await workspace(ctx);
    await addField(w, { objectType: 'contact', key: 'score', label: 'Score', valueType: 'NUMBER' });
    const con = (await loadDefinitions(w, { objectType: 'contact' }))!;
    const contacts: Written[] = [];
    // 300 contacts; the 60 oldest score 1, and every tenth of the others scores 2.
    for (let i = 0; i < 300; i++) {
      const score = i < 60 ? 1 : i % 10 === 0 ? 2 : 0;
      const id = `con_o${String(i).padStart(3, '0')}`;
      contacts.push(await writeRecord(w.db, con, w.actor.workspaceId, { id, createdAt: new Date(BASE + i * 1000).toISOString(), values: { score } }));
    }
    for (const [query, score] of [
      [{ 'score[greaterThan]': '0.5', 'score[lessThan]': '1.5' }, 1],
      [{ 'score[greaterThan]': '0.5' }, -1],
      [{ score: '2' }, 2],
    ] as const) {
      const want = contacts.filter((x) => matches(x, 'score', score === -1 ? 'greaterThan' : 'equal', score === -1 ? 0.5 : score)).sort(newestFirst);
      for (const page of [
        { limit: 5, offset: 0 },
        { limit: 25, offset: 10 },
        { limit: 3, offset: want.length - 2 },
      ]) {
        const got = await filteredPage(w, { defs: con, filters: parseFilters(query, con), page });
        assert.equal(got.totalCount, want.length);
        assert.deepEqual(
          got.ids,
          want.slice(page.offset, page.offset + page.limit).map((x) => x.id),
          `${JSON.stringify(query)} ${JSON.stringify(page)}`,
        );
      }
    }
  });

  test('a contains needle longer than the probes is driven by its rarest trigram, the last one included', async () => {
    // `+49 30 1234567` is read as `+49301234567` (E.164, as phones are stored), whose 10 trigrams
    // are more than the probes; only the last, `567`, is rare (phones end in 123456<i % 10>). The
    // probes are spread from the first trigram to the last, so `567` is counted and drives.
    const query = { 'phone[contains]': '+49 30 1234567' };
    const plan = await planFilters(c, { defs, filters: parseFilters(query, defs), page: { limit: 25, offset: 0 } });
    assert.equal(plan.kind, 'driven');
    assert.ok(
      plan.kind === 'driven' && plan.sorted.compile(c.db).parameters.includes(trigramKey(fieldHash(c.actor.workspaceId, 'account', 'phone'), '567')),
      'the rarest trigram drives',
    );
    assert.equal(await agrees(c, defs, all, query, (w) => matches(w, 'phone', 'contains', '+49301234567')), 6);
  });

  test('hostile keys and values are refused or matched literally, never run as SQL', async () => {
    for (const key of [
      '__proto__[equal]',
      'constructor',
      '$name[equal',
      '$name]',
      '$name[equal][x]',
      '$name[[equal]]',
      '$name[-]',
      '$name[EQUAL]',
      '$name[-contains]',
      'x'.repeat(5000),
      "$name'--",
      '$name[equal]\u0000',
    ]) {
      await rejects(c, defs, { [key]: 'a' }, key);
    }
    await rejects(c, defs, { '$name[equal]': '' }, '$name[equal]');
    await rejects(c, defs, { '$name[equal]': 'a'.repeat(1001) }, '$name[equal]');
    await rejects(c, defs, { '$name[equal]': 'a\u0000b' }, '$name[equal]');
    await rejects(c, defs, { '$name[equal]': Array.from({ length: 21 }, () => 'a') }, '$name[equal]');
    // Quotes, %, _ and \ match themselves only.
    assert.equal(await agrees(c, defs, all, { '$name[equal]': NAMES[8] }, (w) => rawName(w) === NAMES[8]), 6);
    assert.equal(await agrees(c, defs, all, { '$name[startsWith]': 'acme%_' }, (w) => rawName(w) === 'acme%_corp'), 6);
    assert.equal(await agrees(c, defs, all, { '$name[startsWith]': 'acme%' }, (w) => rawName(w) === 'acme%_corp'), 6);
    assert.equal(await agrees(c, defs, all, { '$name[startsWith]': 'back\\' }, (w) => rawName(w) === 'back\\slash'), 6);
    await agrees(c, defs, all, { '$website[contains]': 'a_b%c' }, (w) => matches(w, '$website', 'contains', 'a_b%c'));
    assert.equal(await agrees(c, defs, all, { '$website[contains]': '_' }, (w) => matches(w, '$website', 'contains', '_')), 15);
    assert.equal(await agrees(c, defs, all, { '$website[contains]': 'ab%' }, () => false), 0);
    assert.equal(await agrees(c, defs, all, { '$website[contains]': '%' }, (w) => matches(w, '$website', 'contains', '%')), 15);
    assert.equal(await agrees(c, defs, all, { 'mail[contains]': "'; --" }, () => false), 0);
    // The records are all still there.
    assert.equal((await filteredPage(c, { defs, filters: [], page: { limit: 1, offset: 0 } })).totalCount, 60);
  });

  test('relationship filters: own and inverse storage, by id; an unknown id matches nothing', async () => {
    const w = await workspace(ctx);
    const ws = w.actor.workspaceId;
    const [acc, con, opp] = await Promise.all(['account', 'contact', 'opportunity'].map(async (t) => (await loadDefinitions(w, { objectType: t }))!));
    const accounts = [];
    for (let i = 0; i < 3; i++)
      accounts.push(await writeRecord(w.db, acc!, ws, { id: `acc_r${i}`, createdAt: new Date(BASE + i).toISOString(), values: { $name: `A${i}` } }));
    const contacts: Written[] = [];
    for (let i = 0; i < 12; i++) {
      const links = [`acc_r${i % 3}`, ...(i % 4 === 0 ? ['acc_r2'] : [])].filter((x, k, a) => a.indexOf(x) === k);
      const rels: Record<string, string[]> = i % 5 === 4 ? {} : { $account: links };
      contacts.push(
        await writeRecord(w.db, con!, ws, { id: `con_r${String(i).padStart(2, '0')}`, createdAt: new Date(BASE + i * 1000).toISOString(), values: {}, rels }),
      );
    }
    // Opportunities name their account by the same key; they are not contacts.
    for (let i = 0; i < 4; i++)
      await writeRecord(w.db, opp!, ws, {
        id: `opp_r${i}`,
        createdAt: new Date(BASE + i).toISOString(),
        values: { $name: 'O' },
        rels: { $account: ['acc_r0'] },
      });
    const holds = (x: Written, id: string) => (x.rels.get('$account') ?? []).includes(id);
    assert.ok((await agrees(w, con!, contacts, { $account: 'acc_r0' }, (x) => holds(x, 'acc_r0'))) > 0);
    await agrees(w, con!, contacts, { '$account[equal]': 'acc_r2' }, (x) => holds(x, 'acc_r2'));
    await agrees(w, con!, contacts, { '$account[-equal]': 'acc_r0' }, (x) => !holds(x, 'acc_r0'));
    await agrees(w, con!, contacts, { '$account[equal]': 'acc_r2', '$account[-equal]': 'acc_r1' }, (x) => holds(x, 'acc_r2') && !holds(x, 'acc_r1'));
    await agrees(w, con!, contacts, { $account: 'acc_nothing' }, () => false);
    await agrees(w, con!, contacts, { '$account[-equal]': 'acc_nothing' }, () => true);
    // Inverse: an account's $contact is the contacts' $account rows that point at it.
    const withContact = (id: string) => (x: Written) => contacts.some((k) => k.id === id && holds(k, x.id));
    await agrees(w, acc!, accounts, { $contact: 'con_r00' }, withContact('con_r00'));
    await agrees(w, acc!, accounts, { '$contact[-equal]': 'con_r00' }, (x) => !withContact('con_r00')(x));
    await agrees(w, acc!, accounts, { $opportunity: 'opp_r1' }, (x) => x.id === 'acc_r0');
    await rejects(w, con!, { '$account[startsWith]': 'acc' }, '$account[startsWith]');
    await agrees(w, con!, contacts, { '$account[-contains]': 'acc_r0' }, (x) => !holds(x, 'acc_r0'));
    await rejects(w, con!, { $meeting: 'mtg_1' }, '$meeting');
  });
});

function rawName(w: Written): string {
  return NAMES[Number(w.id.slice(4)) % NAMES.length]!;
}
