// SQLite/PostgreSQL parity by differential testing: fast-check generates short sequences of API
// operations (records of every kind and a custom type, their relationships, lists and members,
// filtered pages, field history, merges, delete and restore) with awkward values (case and accents,
// boundary numbers and datetimes, empty strings, NUL, lone surrogates), runs each on a fresh
// workspace of both databases and asserts that every answer is the same once ids and server times
// are normalised (test/helpers/parity-ops.ts). The two databases are one product: any difference is
// a defect of one of them. Fixed seed, bounded runs (PARITY_SEED, PARITY_RUNS).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField, addOption, addRelationship } from '../../src/definitions/service.ts';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { type Kind, LIST_PATHS, normaliser, type Op, PATHS, RELATED, sequenceArb, SLUG } from '../helpers/parity-ops.ts';

const RUNS = Number(process.env.PARITY_RUNS ?? 30);
const SEED = Number(process.env.PARITY_SEED ?? 20260301);
const MISSING: Record<Kind | 'list', string> = {
  account: 'acc_0000000000zzzzzzzzzzzzzzzz',
  contact: 'con_0000000000zzzzzzzzzzzzzzzz',
  opportunity: 'opp_0000000000zzzzzzzzzzzzzzzz',
  task: 'tsk_0000000000zzzzzzzzzzzzzzzz',
  note: 'nte_0000000000zzzzzzzzzzzzzzzz',
  [SLUG]: 'rec_0000000000zzzzzzzzzzzzzzzz',
  list: 'lst_0000000000zzzzzzzzzzzzzzzz',
};
const MEMBER_KEY: Record<string, string> = { account: '$accounts', contact: '$contacts', opportunity: '$opportunities' };

/** One database's side of a run: its app, a fresh workspace, and the ids it made, by kind. */
class Side {
  ids = new Map<Kind | 'list', string[]>();
  listKinds: Kind[] = [];
  secret = '';
  workspaceId = '';
  userId = '';
  norm = normaliser();
  readonly t: TestApp;
  constructor(t: TestApp) {
    this.t = t;
  }

  async reset(): Promise<void> {
    const s = await seedWorkspace(this.t);
    this.secret = s.secret;
    this.workspaceId = s.workspaceId;
    this.userId = s.userId;
    this.ids = new Map();
    this.listKinds = [];
    this.norm = normaliser();
    const c = operatorCtx(this.t.deps.db.kysely, s.workspaceId);
    await defineObjectType(c, { slug: SLUG, label: 'Gadgets' });
    for (const type of ['account', SLUG]) {
      await addField(c, { objectType: type, key: 'seats', label: 'Seats', valueType: 'NUMBER' });
      await addField(c, { objectType: type, key: 'renews', label: 'Renews', valueType: 'DATETIME' });
    }
    await addField(c, { objectType: SLUG, key: 'name', label: 'Name', valueType: 'TEXT' });
    await addField(c, { objectType: SLUG, key: 'vip', label: 'VIP', valueType: 'CHECKBOX' });
    await addField(c, { objectType: SLUG, key: 'tier', label: 'Tier', valueType: 'SINGLE_SELECT' });
    for (const label of ['Gold', 'GÖLD', 'Silver']) await addOption(c, { objectType: SLUG, fieldKey: 'tier', label });
    await addRelationship(c, { objectType: SLUG, key: 'owner_account', label: 'Account', cardinality: 'has_one', targetType: 'account' });
  }

  id(kind: Kind | 'list' | 'member', ref: number): string {
    if (kind === 'member') return this.userId;
    const ids = this.ids.get(kind) ?? [];
    return ids.length === 0 ? MISSING[kind] : (ids[ref % ids.length] as string);
  }

  private remember(kind: Kind | 'list', res: { statusCode: number; json(): any }): void {
    if (res.statusCode === 200) this.ids.set(kind, [...(this.ids.get(kind) ?? []), res.json().id]);
  }

  /** Runs one operation; the answer as status and body, normalised. */
  async run(o: Op): Promise<unknown> {
    const res = await this.send(o);
    // A later create never shares a millisecond with this one: ties of `createdAt` are broken by
    // the random part of the ids, which the two sides draw differently.
    const t0 = Date.now();
    while (Date.now() === t0) await new Promise((r) => setTimeout(r, 1));
    return this.norm(res);
  }

  private async send(o: Op): Promise<unknown> {
    const t = this.t;
    const answer = (r: { statusCode: number; body: string }) => ({ status: r.statusCode, body: r.body ? JSON.parse(r.body) : null });
    switch (o.op) {
      case 'create': {
        const relationships = Object.fromEntries(Object.entries(o.rels).map(([k, ref]) => [k, this.id(RELATED[o.kind]?.[k] as Kind | 'member', ref)]));
        const r = await call(t, this.secret, 'POST', PATHS[o.kind], { fields: o.fields, relationships });
        this.remember(o.kind, r);
        return answer(r);
      }
      case 'update':
        return answer(await call(t, this.secret, 'POST', `${PATHS[o.kind]}/${this.id(o.kind, o.ref)}`, { fields: o.fields }));
      case 'get':
        return answer(await call(t, this.secret, 'GET', `${PATHS[o.kind]}/${this.id(o.kind, o.ref)}`));
      case 'delete':
        return answer(await call(t, this.secret, 'DELETE', `${PATHS[o.kind]}/${this.id(o.kind, o.ref)}`));
      case 'restore':
        try {
          const db = t.deps.db.kysely;
          const done = await write(db, (tx) => restore(operatorCtx(tx, this.workspaceId), { id: this.id(o.kind, o.ref) }));
          return { restored: done };
        } catch (err) {
          const e = err as Error & { code?: string; param?: string };
          return { refused: e.code ?? e.message, param: e.param };
        }
      case 'list': {
        const q = new URLSearchParams([
          ...o.filters.map((f): [string, string] => [`${f.key}[${f.op}]`, f.value]),
          ['limit', String(o.limit)],
          ['offset', String(o.offset)],
        ]);
        return answer(await call(t, this.secret, 'GET', `${LIST_PATHS[o.kind]}?${q.toString()}`));
      }
      case 'history': {
        const base = `${PATHS[o.kind]}/${this.id(o.kind, o.ref)}/fields/${encodeURIComponent(o.field)}/history?limit=${o.limit}`;
        const first = await call(t, this.secret, 'GET', base);
        const cursor = first.statusCode === 200 ? first.json().nextCursor : null;
        const next = cursor ? answer(await call(t, this.secret, 'GET', `${base}&after=${encodeURIComponent(cursor)}`)) : null;
        return { first: answer(first), next };
      }
      case 'merge':
      case 'mergeWith': {
        const path = o.kind === SLUG ? `/v1/objects/${SLUG}/merge` : `${PATHS[o.kind]}/merge`;
        const resolutions = o.op === 'mergeWith' ? { fieldResolutions: { [o.field]: o.pick } } : {};
        return answer(
          await call(t, this.secret, 'POST', path, { primaryId: this.id(o.kind, o.ref), duplicateId: this.id(o.kind, o.ref + 1 + o.other), ...resolutions }),
        );
      }
      case 'link': {
        const target = RELATED[o.kind]?.[o.key] as Kind | 'member';
        const ids = o.others.map((r) => this.id(target, r));
        const body = { relationships: { [o.key]: { [o.how]: ids } } };
        return answer(await call(t, this.secret, 'POST', `${PATHS[o.kind]}/${this.id(o.kind, o.ref)}`, body));
      }
      case 'linked': {
        const target = RELATED[o.kind]?.[o.key] as Kind | 'member';
        const q = new URLSearchParams([[`${o.key}[${o.negate ? '-equal' : 'equal'}]`, this.id(target, o.ref)]]);
        return answer(await call(t, this.secret, 'GET', `${LIST_PATHS[o.kind]}?${q.toString()}`));
      }
      case 'lists':
        return answer(await call(t, this.secret, 'GET', `/v1/lists?limit=${1 + (o.ref % 4)}&offset=${o.ref % 2}`));
      case 'listDelete':
        return answer(await call(t, this.secret, 'DELETE', `/v1/lists/${this.id('list', o.ref)}`));
      case 'listCreate': {
        const members = o.members.map((m) => this.id(o.kind, m));
        const r = await call(t, this.secret, 'POST', '/v1/lists', {
          fields: { $name: o.name, $objectType: o.kind },
          relationships: { [MEMBER_KEY[o.kind] as string]: members },
        });
        this.remember('list', r);
        if (r.statusCode === 200) this.listKinds.push(o.kind);
        return answer(r);
      }
      case 'listUpdate': {
        const lists = this.ids.get('list') ?? [];
        const kind = this.listKinds[o.ref % Math.max(1, lists.length)] ?? 'account';
        const body = {
          ...(o.name === null ? {} : { fields: { $name: o.name } }),
          relationships: { [MEMBER_KEY[kind] as string]: { add: o.add.map((m) => this.id(kind, m)), remove: o.remove.map((m) => this.id(kind, m)) } },
        };
        return answer(await call(t, this.secret, 'POST', `/v1/lists/${this.id('list', o.ref)}`, body));
      }
      case 'listMembers': {
        const lists = this.ids.get('list') ?? [];
        const kind = this.listKinds[o.ref % Math.max(1, lists.length)] ?? 'account';
        const plural = PATHS[kind].slice('/v1/'.length);
        return answer(await call(t, this.secret, 'GET', `/v1/lists/${this.id('list', o.ref)}/${plural}?limit=${o.limit}&offset=${o.offset}`));
      }
    }
  }
}

const dialects = testDialects();
const sides: Side[] = [];
before(async () => {
  for (const d of dialects) sides.push(new Side(await buildTestApp(d)));
});
after(async () => {
  for (const s of sides) await s.t.close();
});

test(
  'every generated sequence of operations answers the same on SQLite and PostgreSQL',
  { skip: dialects.length < 2 && 'PostgreSQL not reachable' },
  async () => {
    const [lite, pg] = sides as [Side, Side];
    await fc.assert(
      fc.asyncProperty(sequenceArb, async (ops) => {
        await lite.reset();
        await pg.reset();
        for (const [i, o] of ops.entries()) {
          const a = await lite.run(o);
          const b = await pg.run(o);
          assert.deepEqual(b, a, `step ${i} ${JSON.stringify(o)}: postgres differs from sqlite`);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  },
);
