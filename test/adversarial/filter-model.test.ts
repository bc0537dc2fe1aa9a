// Filtered listings against a model (docs/filtering.md), on both databases. Each run builds a
// workspace of accounts, contacts and tasks whose fields hold text of every case and script, `%`,
// `_` and `\`, numbers, instants, checkboxes, selects, URLs, e-mail addresses in both spellings of
// their domain and telephone numbers, linked contact↔account and task→account, half of them
// starting with a bulk import (postings as packs); applies random creates, updates, deletes,
// restores and merges through the API (restores as the CLI does them);
// then sends random filters (every operator, negated, relationship keys and slugs, ids of live,
// trashed, merged, absent and other-type records, 1- and 2-character needles that have no trigram,
// repeated keys, refused ones) with random pages, and compares `data`'s ids in order and
// `totalCount`, or the refusal, with test/helpers/filter-oracle.ts. Records' values are taken from
// the API's answers; which records are live and what they link to is the model's. FUZZ_RUNS and
// FUZZ_SEED run other plans.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { addField, addOption } from '../../src/definitions/service.ts';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { write } from '../../src/db/write.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { BULK_LOAD, IMPORT_BATCH } from '../../src/records/import.ts';
import { PACKS } from '../../src/records/index/repository.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { BAD_KEYS, CUSTOM, FIELDS, type Gen, type Kind, PLURAL, rawTexts, RELATIONSHIPS, value, valueFor } from '../helpers/filter-model-data.ts';
import { expected, paramOf, type SentFilter, type ShownRecord, type TypeModel } from '../helpers/filter-oracle.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 10);
const SEED = Number(process.env.FUZZ_SEED ?? 20260301);
const STEPS = 14;
const QUERIES = 40;

interface Rec extends ShownRecord {
  kind: Kind;
  state: 'live' | 'trash' | 'merged';
}

class Model {
  recs = new Map<string, Rec>();
  /** `source target` pairs: a contact's or a task's `$account`, kept while an end is in the trash. */
  links = new Set<string>();
  readonly s: Seeded;
  constructor(s: Seeded) {
    this.s = s;
  }
  of(kind: Kind, state: Rec['state'] = 'live'): Rec[] {
    return [...this.recs.values()].filter((r) => r.kind === kind && r.state === state);
  }
  /** A live record as the API shows it: its relationships are the pairs whose ends are both live. */
  shown(r: Rec): ShownRecord {
    const live = (id: string) => this.recs.get(id)?.state === 'live';
    const pairs = [...this.links].map((p) => p.split(' ') as [string, string]).filter(([a, b]) => live(a) && live(b));
    const rel: Record<string, string[]> = {};
    if (r.kind === 'account') {
      rel.$contact = pairs.filter(([c, a]) => a === r.id && this.recs.get(c)!.kind === 'contact').map(([c]) => c);
      rel.$task = pairs.filter(([t, a]) => a === r.id && this.recs.get(t)!.kind === 'task').map(([t]) => t);
    } else {
      rel.$account = pairs.filter(([x]) => x === r.id).map(([, a]) => a);
      if (r.kind === 'task') rel.$assignedTo = [this.s.userId];
    }
    return { id: r.id, createdAt: r.createdAt, fields: r.fields, relationships: rel };
  }
}

/** The texts that live records of `kind` hold in `key`, as written: what needles are cut from. */
function held(m: Model, kind: Kind, key: string): string[] {
  const vt = FIELDS[kind][key];
  return vt === undefined ? [] : m.of(kind).flatMap((r) => rawTexts(vt, r.fields[key]));
}

function valuesOf(body: { fields: Record<string, { value: unknown }> }): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body.fields).map(([k, v]) => [k, v.value]));
}

eachDialect('filtered listings against a model', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url} ${JSON.stringify(body ?? null)}: ${res.body}`);
    return res.json();
  }

  /** Some fields of a kind: all required ones on create, a random part (some cleared) on update. */
  function fieldsFor(g: Gen, kind: Kind, types: Record<Kind, TypeModel>, create: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const required = new Set(['$name', '$title', '$status']);
    for (const [key, vt] of Object.entries(FIELDS[kind])) {
      const need = create && required.has(key) && kind !== 'contact';
      if (!need && !g(fc.boolean)) continue;
      out[key] = !create && !required.has(key) && g(() => fc.nat(4)) === 0 ? null : value(g, vt, key, types[kind].options[key] ?? []);
    }
    return out;
  }

  async function step(g: Gen, m: Model, types: Record<Kind, TypeModel>): Promise<string> {
    const s = m.s;
    const pick = <T>(xs: readonly T[]) => (xs.length === 0 ? undefined : xs[g(() => fc.nat(xs.length - 1))]);
    const what: string = g(fc.constantFrom, 'account', 'contact', 'task', 'update', 'update', 'delete', 'restore', 'merge');
    const remember = (kind: Kind, body: any) => {
      const r: Rec = { kind, state: 'live', id: body.id, createdAt: body.createdAt, fields: valuesOf(body), relationships: {} };
      m.recs.set(r.id, r);
      return r;
    };
    switch (what) {
      case 'account':
      case 'contact':
      case 'task': {
        const kind = what;
        const account = kind === 'account' ? undefined : pick(m.of('account'));
        const relationships: Record<string, unknown> = kind === 'task' ? { $assignedTo: s.userId } : {};
        if (account) relationships.$account = [account.id];
        const r = remember(kind, await ok(s, 'POST', `/v1/${PLURAL[kind]}`, { fields: fieldsFor(g, kind, types, true), relationships }));
        if (account) m.links.add(`${r.id} ${account.id}`);
        return what;
      }
      case 'update': {
        const r = pick([...m.recs.values()].filter((x) => x.state === 'live'));
        if (!r) return 'skip';
        const body: Record<string, unknown> = { fields: fieldsFor(g, r.kind, types, false) };
        const a = pick(m.of('account'));
        if (r.kind === 'contact' && a) {
          const change = g(fc.boolean) ? 'add' : 'remove';
          body.relationships = { $account: { [change]: [a.id] } };
          if (change === 'add') m.links.add(`${r.id} ${a.id}`);
          else m.links.delete(`${r.id} ${a.id}`);
        } else if (r.kind === 'task' && g(fc.boolean)) {
          body.relationships = { $account: { replace: a ? [a.id] : [] } };
          for (const p of [...m.links]) if (p.startsWith(`${r.id} `)) m.links.delete(p);
          if (a) m.links.add(`${r.id} ${a.id}`);
        }
        r.fields = valuesOf(await ok(s, 'POST', `/v1/${PLURAL[r.kind]}/${r.id}`, body));
        return 'update';
      }
      case 'delete': {
        const r = pick([...m.recs.values()].filter((x) => x.state === 'live'));
        if (!r) return 'skip';
        await ok(s, 'DELETE', `/v1/${PLURAL[r.kind]}/${r.id}`);
        r.state = 'trash';
        return 'delete';
      }
      case 'restore': {
        const r = pick([...m.recs.values()].filter((x) => x.state === 'trash'));
        if (!r) return 'skip';
        await write(ctx().deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: r.id }));
        r.state = 'live';
        r.fields = valuesOf(await ok(s, 'GET', `/v1/${PLURAL[r.kind]}/${r.id}`));
        return 'restore';
      }
      case 'merge': {
        const kind: 'account' | 'contact' = g(fc.constantFrom, 'account' as const, 'contact' as const);
        const p = pick(m.of(kind));
        const d = pick(m.of(kind).filter((x) => x !== p));
        if (!p || !d) return 'skip';
        const out = await ok(s, 'POST', `/v1/${PLURAL[kind]}/merge`, { primaryId: p.id, duplicateId: d.id });
        p.fields = valuesOf(out.primary);
        d.state = 'merged';
        // The primary takes the duplicate's links; one pair where both held it.
        for (const pair of [...m.links]) {
          const ends = pair.split(' ');
          if (!ends.includes(d.id)) continue;
          m.links.delete(pair);
          m.links.add(ends.map((x) => (x === d.id ? p.id : x)).join(' '));
        }
        return `merge ${kind}`;
      }
    }
    return 'skip';
  }

  /** One filter of a listing of `kind`, drawn from the state: needles are parts of stored values. */
  function filterFor(g: Gen, m: Model, kind: Kind, types: Record<Kind, TypeModel>): SentFilter {
    const pick = <T>(xs: readonly T[]) => xs[g(() => fc.nat(xs.length - 1))]!;
    const shape = g(() => fc.nat(19));
    if (shape === 0) return { key: pick(BAD_KEYS), op: pick(['', 'equal', 'contains']), value: 'x' };
    const type = types[kind];
    if (shape <= 4) {
      const keys = Object.entries(type.relationships).flatMap(([k, x]) => [k, ...x.slugs]);
      const ids = [...[...m.recs.keys()].slice(-12), m.s.userId, 'acc_00000000000000000000000000', 'con_nothing', ''];
      return { key: pick(keys), op: pick(['', 'equal', 'contains', '-equal', '-contains', 'startsWith', '-startsWith']), value: pick(ids) };
    }
    const [key, vt] = pick(Object.entries(type.fields));
    const ops: Record<string, string[]> = {
      NUMBER: ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual'],
      DATETIME: ['equal', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual'],
      TEXT: ['equal', 'startsWith', 'startsWith'],
      FULL_NAME: ['equal', 'startsWith'],
      ADDRESS: ['equal', 'startsWith'],
      URL: ['contains'],
      EMAIL: ['contains'],
      TELEPHONE: ['contains'],
    };
    const fitting = ops[vt] ?? ['equal'];
    const base = g(() => fc.nat(9)) === 0 ? pick(['equal', 'greaterThan', 'startsWith', 'contains', 'bogus']) : pick(fitting);
    const op = g(() => fc.nat(3)) === 0 ? '' : g(fc.boolean) ? `-${base}` : base;
    return { key, op, value: valueFor(g, held(m, kind, key), key, vt, op.replace(/^-/, ''), type.options[key] ?? []) };
  }

  async function check(g: Gen, m: Model, types: Record<Kind, TypeModel>, done: string[]) {
    const kind: Kind = g(fc.constantFrom, 'account' as const, 'contact' as const, 'task' as const);
    const filters = g(() => fc.nat(3)) === 0 ? [] : Array.from({ length: g(() => fc.integer({ min: 1, max: 3 })) }, () => filterFor(g, m, kind, types));
    // Now and then a key sent again with another value (a range, two negated statuses).
    const again = filters[0];
    if (again && g(() => fc.nat(3)) === 0) {
      const vt = types[kind].fields[again.key];
      const value = vt ? valueFor(g, held(m, kind, again.key), again.key, vt, again.op.replace(/^-/, ''), types[kind].options[again.key] ?? []) : again.value;
      filters.push({
        ...again,
        op: vt === 'NUMBER' || vt === 'DATETIME' ? g(fc.constantFrom, '', 'lessThan', 'greaterThan', '-lessThanOrEqual') : again.op,
        value,
      });
    }
    const records = m.of(kind).map((r) => m.shown(r));
    const limit = g(fc.constantFrom, 1, 2, 3, 5, 25);
    const offset = g(() => fc.nat(records.length + 2));
    const want = expected(types[kind], records, filters, { limit, offset });
    const qs = [...filters.map((f) => [paramOf(f), f.value]), ['limit', String(limit)], ['offset', String(offset)]];
    const url = `/v1/${PLURAL[kind]}?${qs.map(([k, v]) => `${encodeURIComponent(k!)}=${encodeURIComponent(v!)}`).join('&')}`;
    const res = await call(ctx(), m.s.secret, 'GET', url);
    const where = `${ctx().dialect} GET ${decodeURIComponent(url)} after ${done.join(', ')}`;
    if ('refused' in want) {
      assert.equal(res.statusCode, 400, `${where}: want a refusal naming one of ${want.refused.join(' ')}, got ${res.body}`);
      const error = res.json().error;
      assert.equal(error.code, 'invalid_parameter', `${where}: ${res.body}`);
      assert.ok(want.refused.includes(error.param), `${where}: param ${error.param}, want one of ${want.refused.join(' ')}`);
      return 'refused';
    }
    assert.equal(res.statusCode, 200, `${where}: ${res.body}`);
    const got = res.json();
    const names = (ids: string[]) => ids.map((id) => `${id} ${JSON.stringify(m.recs.get(id)?.fields[filters[0]?.key ?? ''] ?? null)}`);
    assert.deepEqual(
      { totalCount: got.totalCount, ids: names(got.data.map((r: { id: string }) => r.id)) },
      { totalCount: want.totalCount, ids: names(want.ids) },
      where,
    );
    return want.totalCount === 0 ? 'empty' : 'matched';
  }

  async function setup(s: Seeded): Promise<Record<Kind, TypeModel>> {
    const c = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    for (const type of ['account', 'contact']) {
      for (const [key, valueType] of Object.entries(CUSTOM)) await addField(c, { objectType: type, key, label: key, valueType });
      for (const label of ['Gold', 'Silver', 'Deep  Blue', 'Ωmega']) await addOption(c, { objectType: type, fieldKey: 'tier', label });
      for (const label of ['x', 'y']) await addOption(c, { objectType: type, fieldKey: 'tags', label });
    }
    const types = {} as Record<Kind, TypeModel>;
    for (const kind of ['account', 'contact', 'task'] as const) {
      const defs = (await ok(s, 'GET', `/v1/${PLURAL[kind]}/definitions`)).fieldDefinitions;
      const options = Object.fromEntries(Object.entries<any>(defs).map(([k, d]) => [k, d.typeConfiguration?.options ?? []]));
      types[kind] = { fields: FIELDS[kind], options, relationships: RELATIONSHIPS[kind] };
    }
    return types;
  }

  /**
   * Accounts and contacts imported as the first records of their types, in the bulk way with small
   * batches and packs (docs/filtering.md §Indexes, Packs): one `createdAt` for all of them, so
   * their order is their ids'; later writes leave stale ids in the packs.
   */
  async function bulkImport(g: Gen, m: Model, types: Record<Kind, TypeModel>) {
    const lines: unknown[] = [];
    const asImported = (kind: Kind, fields: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { value: v, valueType: types[kind].fields[k] }]));
    const accounts = g(() => fc.integer({ min: 2, max: 6 }));
    for (let i = 0; i < accounts; i++)
      lines.push({ object: 'account', externalId: `a${i}`, fields: asImported('account', fieldsFor(g, 'account', types, true)) });
    for (let i = 0; i < g(() => fc.integer({ min: 2, max: 8 })); i++) {
      const links = g(() =>
        fc.subarray(
          Array.from({ length: accounts }, (_, k) => `a${k}`),
          { maxLength: 2 },
        ),
      );
      const fields = asImported('contact', fieldsFor(g, 'contact', types, true));
      lines.push({ object: 'contact', externalId: `c${i}`, fields, relationships: links.length > 0 ? { $account: { values: links } } : {} });
    }
    const saved = [{ ...BULK_LOAD }, { ...IMPORT_BATCH }, { ...PACKS }] as const;
    Object.assign(BULK_LOAD, { min: 1, share: 0 });
    Object.assign(IMPORT_BATCH, { size: 3 });
    Object.assign(PACKS, { postings: 40 });
    try {
      const text = lines.map((x) => JSON.stringify(x)).join('\n');
      const packs = async () => Number((await sql<{ n: unknown }>`select count(*) as n from record_trigram_packs`.execute(ctx().deps.db.kysely)).rows[0]!.n);
      const before = await packs();
      const out = await runImport(operatorCtx(ctx().deps.db.kysely, m.s.workspaceId), { kinds: importKinds(), text });
      assert.ok((await packs()) > before, 'the import wrote packs');
      for (const kind of ['account', 'contact'] as const) {
        for (const id of Object.values<string>(out.ids[kind] ?? {})) {
          const body = await ok(m.s, 'GET', `/v1/${PLURAL[kind]}/${id}`);
          m.recs.set(id, { kind, state: 'live', id, createdAt: body.createdAt, fields: valuesOf(body), relationships: {} });
          if (kind === 'contact') for (const a of body.relationships.$account.values) m.links.add(`${id} ${a}`);
        }
      }
    } finally {
      Object.assign(BULK_LOAD, saved[0]);
      Object.assign(IMPORT_BATCH, saved[1]);
      Object.assign(PACKS, saved[2]);
    }
  }

  test('random filters and pages over random writes answer what docs/filtering.md says', async () => {
    const tally: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        const s = await seedWorkspace(ctx());
        const types = await setup(s);
        const m = new Model(s);
        const done: string[] = [];
        if (g(fc.boolean)) {
          await bulkImport(g, m, types);
          done.push('import');
        }
        for (let i = 0; done.length < STEPS && i < STEPS * 3; i++) {
          const what = await step(g, m, types);
          tally[what] = (tally[what] ?? 0) + 1;
          if (what !== 'skip') done.push(what);
        }
        for (let q = 0; q < QUERIES; q++) {
          const what = await check(g, m, types, done);
          tally[what] = (tally[what] ?? 0) + 1;
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    console.log(`# filter model [${ctx().dialect}]: ${RUNS} runs; ${JSON.stringify(tally)}; seed ${SEED}`);
    for (const what of ['restore', 'merge contact', 'refused', 'matched', 'empty']) assert.ok((tally[what] ?? 0) > 0, `no ${what}: ${JSON.stringify(tally)}`);
  });
});
