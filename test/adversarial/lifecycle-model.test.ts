// Sequences of lifecycle writes against a model, on both databases (docs/trash.md, docs/merge.md,
// docs/events.md): random creates, links, list adds and removes, deletes, restores, merges and
// purges of accounts, contacts and lists, one at a time. The model keeps every link and membership
// as a pair that a delete never drops, shown while both ends are live: a merge renames the
// duplicate's pairs to the primary (one pair where both were held), a purge drops the purged
// record's. After every step each live record's links, each live list's member pages and
// `totalCount`, and each listing's `totalCount` are the model's; a restore's and a merge's event
// carry the record as it is retrieved; and the member events of lists never deleted, replayed in
// order, give their members (unless a purge erased events, docs/trash.md §Purge). A list's own
// delete and restore append no member events (docs/events.md §Types), so a list deleted once is
// left out of that replay. MODEL_RUNS and MODEL_SEED run other plans.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { purge } from '../../src/trash/purge.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

const STEPS = ['account', 'contact', 'list', 'link', 'unlink', 'add', 'remove', 'delete', 'restore', 'merge', 'purge'] as const;
type Step = (typeof STEPS)[number];
type Kind = 'account' | 'contact' | 'list';
type State = 'live' | 'trash' | 'merged' | 'purged';
const PLURAL: Record<Kind, string> = { account: 'accounts', contact: 'contacts', list: 'lists' };

interface Model {
  kind: Map<string, Kind>;
  state: Map<string, State>;
  /** Of a list: the type of its members. */
  holds: Map<string, 'account' | 'contact'>;
  /** `contact account` pairs and `list record` pairs. */
  links: Set<string>;
  members: Set<string>;
  deletedLists: Set<string>;
  purged: boolean;
}

const ops = fc.array(fc.record({ step: fc.constantFrom(...STEPS), a: fc.nat(), b: fc.nat() }), { minLength: 30, maxLength: 30 });

eachDialect('lifecycle against a model', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url} ${JSON.stringify(body ?? null)}: ${res.body}`);
    return res.json();
  }
  async function pages(s: Seeded, url: string): Promise<string[]> {
    const ids: string[] = [];
    for (let offset = 0; ; offset += 3) {
      const page = await ok(s, 'GET', `${url}?limit=3&offset=${offset}`);
      ids.push(...page.data.map((x: { id: string }) => x.id));
      if (page.data.length < 3) {
        assert.equal(page.totalCount, ids.length, `${url}: totalCount ${page.totalCount}, ${ids.length} listed`);
        return ids.sort();
      }
    }
  }
  async function lastEvent(s: Seeded, type: string) {
    const row = await ctx()
      .deps.db.kysely.selectFrom('events')
      .select('body')
      .where('workspace_id', '=', s.workspaceId)
      .where('type', '=', type)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    return JSON.parse(row.body);
  }

  async function check(s: Seeded, m: Model, when: string) {
    const live = (k: Kind) => [...m.kind].filter(([id, kind]) => kind === k && m.state.get(id) === 'live').map(([id]) => id);
    const isLive = (id: string) => m.state.get(id) === 'live';
    const pairs = (set: Set<string>) => [...set].map((p) => p.split(' ') as [string, string]);
    for (const k of ['account', 'contact', 'list'] as const) assert.deepEqual(await pages(s, `/v1/${PLURAL[k]}`), live(k).sort(), `${when}: ${k}s listed`);
    for (const c of live('contact')) {
      const want = pairs(m.links)
        .filter(([x, a]) => x === c && isLive(a))
        .map(([, a]) => a);
      const got = (await ok(s, 'GET', `/v1/contacts/${c}`)).relationships.$account.values;
      assert.deepEqual([...got].sort(), want.sort(), `${when}: $account of ${c}`);
    }
    for (const a of live('account')) {
      const want = pairs(m.links)
        .filter(([c, x]) => x === a && isLive(c))
        .map(([c]) => c);
      const got = (await ok(s, 'GET', `/v1/accounts/${a}`)).relationships.$contact.values;
      assert.deepEqual([...got].sort(), want.sort(), `${when}: $contact of ${a}`);
    }
    for (const l of live('list')) {
      const want = pairs(m.members)
        .filter(([x, r]) => x === l && isLive(r))
        .map(([, r]) => r);
      assert.deepEqual(await pages(s, `/v1/lists/${l}/${PLURAL[m.holds.get(l)!]}`), want.sort(), `${when}: members of ${l}`);
    }
    if (m.purged) return;
    const rows = await ctx().deps.db.kysely.selectFrom('events').select('body').where('workspace_id', '=', s.workspaceId).orderBy('seq').execute();
    const mirror = new Map<string, Set<string>>();
    for (const { body } of rows) {
      const e = JSON.parse(body);
      if (!e.type.startsWith('list.members_')) continue;
      const set = mirror.get(e.data.object.id) ?? new Set<string>();
      for (const id of e.data.members) {
        if (e.type === 'list.members_added') set.add(id);
        else set.delete(id);
      }
      mirror.set(e.data.object.id, set);
    }
    for (const l of live('list').filter((x) => !m.deletedLists.has(x))) {
      const want = pairs(m.members)
        .filter(([x, r]) => x === l && isLive(r))
        .map(([, r]) => r);
      assert.deepEqual([...(mirror.get(l) ?? [])].sort(), want.sort(), `${when}: member events of ${l}`);
    }
  }

  /** Renames the duplicate's pairs to the primary's, one pair where both were held. */
  function rename(set: Set<string>, from: string, to: string) {
    for (const p of [...set]) {
      const parts = p.split(' ');
      if (!parts.includes(from)) continue;
      set.delete(p);
      set.add(parts.map((x) => (x === from ? to : x)).join(' '));
    }
  }

  async function run(s: Seeded, m: Model, op: { step: Step; a: number; b: number }): Promise<string> {
    const db = ctx().deps.db.kysely;
    const ids = (k: Kind | null, st: State) => [...m.kind].filter(([id, kind]) => (k === null || kind === k) && m.state.get(id) === st).map(([id]) => id);
    const pick = <T>(xs: T[], n: number) => (xs.length === 0 ? undefined : xs[n % xs.length]);
    const add = (id: string, k: Kind) => (m.kind.set(id, k), m.state.set(id, 'live'));
    switch (op.step) {
      case 'account':
        add((await ok(s, 'POST', '/v1/accounts', { fields: { $name: `a${m.kind.size}` } })).id, 'account');
        return 'account';
      case 'contact': {
        const accounts = [...new Set([pick(ids('account', 'live'), op.a), pick(ids('account', 'live'), op.b)])].filter((x) => x !== undefined);
        const c = (await ok(s, 'POST', '/v1/contacts', { fields: {}, relationships: { $account: accounts } })).id;
        add(c, 'contact');
        for (const a of accounts) m.links.add(`${c} ${a}`);
        return `contact ${accounts.length}`;
      }
      case 'list': {
        const holds = op.a % 2 === 0 ? 'contact' : 'account';
        const first = pick(ids(holds, 'live'), op.b);
        const body = { fields: { $name: `l${m.kind.size}`, $objectType: holds }, relationships: { [`$${PLURAL[holds]}`]: first ? [first] : [] } };
        const l = (await ok(s, 'POST', '/v1/lists', body)).id;
        add(l, 'list');
        m.holds.set(l, holds);
        if (first) m.members.add(`${l} ${first}`);
        return 'list';
      }
      case 'link':
      case 'unlink': {
        const [c, a] = [pick(ids('contact', 'live'), op.a), pick(ids('account', 'live'), op.b)];
        if (!c || !a) return 'skip';
        const change = op.step === 'link' ? 'add' : 'remove';
        await ok(s, 'POST', `/v1/contacts/${c}`, { relationships: { $account: { [change]: [a] } } });
        if (change === 'add') m.links.add(`${c} ${a}`);
        else m.links.delete(`${c} ${a}`);
        return op.step;
      }
      case 'add':
      case 'remove': {
        const l = pick(ids('list', 'live'), op.a);
        const r = l && pick(ids(m.holds.get(l)!, 'live'), op.b);
        if (!l || !r) return 'skip';
        await ok(s, 'POST', `/v1/lists/${l}`, { relationships: { [`$${PLURAL[m.holds.get(l)!]}`]: { [op.step]: [r] } } });
        if (op.step === 'add') m.members.add(`${l} ${r}`);
        else m.members.delete(`${l} ${r}`);
        return op.step;
      }
      case 'delete': {
        // Now and then a record already in the trash: the same answer, nothing changed.
        const id = op.b % 5 === 0 ? pick(ids(null, 'trash'), op.a) : pick(ids(null, 'live'), op.a);
        if (!id) return 'skip';
        await ok(s, 'DELETE', `/v1/${PLURAL[m.kind.get(id)!]}/${id}`);
        m.state.set(id, 'trash');
        if (m.kind.get(id) === 'list') m.deletedLists.add(id);
        return 'delete';
      }
      case 'restore': {
        const id = pick(ids(null, 'trash'), op.a);
        if (!id) return 'skip';
        await write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }));
        m.state.set(id, 'live');
        if (m.kind.get(id) !== 'list') {
          const k = m.kind.get(id)!;
          assert.deepEqual((await lastEvent(s, `${k}.restored`)).data.object, await ok(s, 'GET', `/v1/${PLURAL[k]}/${id}`), `the event of ${id}'s restore`);
        }
        return 'restore';
      }
      case 'merge': {
        const k = op.a % 2 === 0 ? 'contact' : 'account';
        const live = ids(k, 'live');
        const [p, d] = [pick(live, op.a), pick(live, op.b)];
        if (!p || !d || p === d) return 'skip';
        const out = await ok(s, 'POST', `/v1/${PLURAL[k]}/merge`, { primaryId: p, duplicateId: d });
        m.state.set(d, 'merged');
        rename(m.links, d, p);
        rename(m.members, d, p);
        assert.deepEqual((await lastEvent(s, `${k}.merged`)).data.object, out.primary);
        assert.deepEqual(await ok(s, 'GET', `/v1/${PLURAL[k]}/${p}`), out.primary);
        return `merge ${k}`;
      }
      case 'purge': {
        const id = pick([...ids(null, 'trash'), ...ids(null, 'merged')], op.a);
        if (!id) return 'skip';
        await write(db, (tx) => purge(operatorCtx(tx, s.workspaceId), { ids: [id] }));
        m.state.set(id, 'purged');
        m.purged = true;
        for (const set of [m.links, m.members]) for (const p of [...set]) if (p.split(' ').includes(id)) set.delete(p);
        return 'purge';
      }
    }
  }

  test('random sequences of creates, links, list members, deletes, restores, merges and purges', async () => {
    const tally: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(ops, async (plan) => {
        const s = await seedWorkspace(ctx());
        const m: Model = { kind: new Map(), state: new Map(), holds: new Map(), links: new Set(), members: new Set(), deletedLists: new Set(), purged: false };
        const done: string[] = [];
        for (const op of plan) {
          const what = await run(s, m, op);
          tally[what] = (tally[what] ?? 0) + 1;
          if (what === 'skip') continue;
          done.push(what);
          await check(s, m, done.join(', '));
        }
      }),
      { numRuns: Number(process.env.MODEL_RUNS ?? 12), seed: Number(process.env.MODEL_SEED ?? 20261203) },
    );
    for (const what of ['restore', 'merge contact', 'merge account', 'purge']) assert.ok((tally[what] ?? 0) > 0, `no ${what} ran: ${JSON.stringify(tally)}`);
  });
});
