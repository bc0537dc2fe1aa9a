// The compact trigram index (docs/filtering.md §Indexes) under rewrites, on both databases: a
// record's postings are always exactly the trigram keys of its current values, with the old ones
// found from the old values (there is no index by record), and `contains` answers from them.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import type { Database, Executor } from '../../src/db/types.ts';
import { write } from '../../src/db/write.ts';
import { addField, loadDefinitions, type TypeDefinitions } from '../../src/definitions/service.ts';
import { trigramRows } from '../../src/records/index/repository.ts';
import { filteredPage, parseFilters } from '../../src/records/filter/service.ts';
import { addTrigramKeys, fieldHash, trigramKey, trigrams } from '../../src/records/index/trigrams.ts';
import { type Ctx, operatorCtx } from '../../src/lib/context.ts';
import { valueRows } from '../../src/records/index/values.ts';
import { writeValueIndex } from '../../src/records/index/repository.ts';
import { writeRecord } from '../helpers/filters-fixtures.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';

/** The postings stored for `id`, in key order. */
async function stored(db: Executor, id: string): Promise<{ key: number; record_id: string }[]> {
  const r = await sql<{ key: unknown; record_id: string }>`select key, record_id from record_trigrams where record_id = ${id} order by key`.execute(db);
  return r.rows.map((x) => ({ key: Number(x.key), record_id: x.record_id }));
}

test('trigram keys: distinct per workspace, type, field and trigram; integers below 2^53', () => {
  const keys = new Set<number>();
  for (const ws of ['ws_a', 'ws_b'])
    for (const type of ['contact', 'account'])
      for (const field of ['$email', 'phone'])
        for (const t of ['ann', 'nn@', 'éè€', '𝒳ab']) {
          const k = trigramKey(fieldHash(ws, type, field), t);
          assert.ok(Number.isSafeInteger(k) && k >= 0, String(k));
          keys.add(k);
        }
  assert.equal(keys.size, 2 * 2 * 2 * 4);
  assert.equal(trigramKey(fieldHash('ws_a', 'contact', '$email'), 'ann'), trigramKey(fieldHash('ws_a', 'contact', '$email'), 'ann'));
  // The scope's parts are separated: moving a character from one part to the next changes the key.
  assert.notEqual(trigramKey(fieldHash('ws_a', 'contact', '$email'), 'ann'), trigramKey(fieldHash('ws_', 'acontact', '$email'), 'ann'));
});

test('addTrigramKeys gives the keys of trigrams() through trigramKey, each once, after those already held', () => {
  const scope = fieldHash('ws_a', 'contact', '$email');
  const values = ['ann.smith@acme.test', '+49 30 1234 1234', 'aaaaaa', 'ab', '', 'chloé@x.fr', 'a😀bc😀😀x', '𝒳𝒳𝒳𝒳', 'ßüé中文字符串'];
  for (const v of values) {
    const got: number[] = [];
    addTrigramKeys(scope, v, got);
    assert.deepEqual(got, [...new Set(trigrams(v).map((t) => trigramKey(scope, t)))], v);
  }
  // Keys already held are not added again; new ones follow them.
  const held = [trigramKey(scope, 'acm'), 7];
  addTrigramKeys(scope, 'acme', held);
  assert.deepEqual(held, [trigramKey(scope, 'acm'), 7, trigramKey(scope, 'cme')]);
});

eachDialect('trigram postings', (ctx) => {
  let c: Ctx<Kysely<Database>>;
  let defs: TypeDefinitions;
  const at = '2026-02-01T00:00:00.000Z';
  before(async () => {
    const t = ctx();
    c = operatorCtx(t.deps.db.kysely, (await seedWorkspace(t)).workspaceId);
    await addField(c, { objectType: 'contact', key: 'phone', label: 'Phone', valueType: 'TELEPHONE' });
    defs = (await loadDefinitions(c, { objectType: 'contact' }))!;
  });

  const expected = (id: string, values: Record<string, unknown>) => trigramRows(valueRows(c.actor.workspaceId, defs, id, values), new Set(['$email', 'phone']));
  const find = async (query: Record<string, string>) =>
    (await filteredPage(c, { defs, filters: parseFilters(query, defs), page: { limit: 25, offset: 0 } })).ids;

  test('a rewrite leaves exactly the postings of the new values, and contains follows them', async () => {
    const first = { $email: ['ann@acme.test', 'ann@home.test'], phone: '+49 30 1234' };
    await writeRecord(c.db, defs, c.actor.workspaceId, { id: 'con_t1', createdAt: at, values: first });
    await writeRecord(c.db, defs, c.actor.workspaceId, { id: 'con_t2', createdAt: at, values: { $email: ['bo@acme.test'] } });
    assert.deepEqual(await stored(c.db, 'con_t1'), expected('con_t1', first));
    assert.deepEqual(await find({ '$email[contains]': 'home.t' }), ['con_t1']);

    // One address kept, one replaced, the phone removed: postings of both shared and lost trigrams.
    const second = { $email: ['ann@acme.test', 'zed@work.example'] };
    await write(c.db, (tx) => writeValueIndex(tx, defs, ['con_t1'], valueRows(c.actor.workspaceId, defs, 'con_t1', second)));
    assert.deepEqual(await stored(c.db, 'con_t1'), expected('con_t1', second));
    assert.deepEqual(await find({ '$email[contains]': 'home.t' }), []);
    assert.deepEqual(await find({ '$email[contains]': 'work.ex' }), ['con_t1']);
    assert.deepEqual(await find({ 'phone[contains]': '1234' }), []);
    assert.deepEqual((await find({ '$email[contains]': 'acme.t' })).sort(), ['con_t1', 'con_t2']);
    // The other record's postings are untouched.
    assert.deepEqual(await stored(c.db, 'con_t2'), expected('con_t2', { $email: ['bo@acme.test'] }));

    // Every value removed: no posting left.
    await write(c.db, (tx) => writeValueIndex(tx, defs, ['con_t1'], []));
    assert.deepEqual(await stored(c.db, 'con_t1'), []);
    assert.deepEqual(await find({ '$email[contains]': 'acme.t' }), ['con_t2']);
  });

  test('one posting per record and key, whichever field and value it comes from', () => {
    const rows = valueRows(c.actor.workspaceId, defs, 'con_x', { $email: ['abcabc@x.test', 'abc@y.test'] });
    const got = trigramRows(rows, new Set(['$email']));
    const want = new Set([...trigrams('abcabc@x.test'), ...trigrams('abc@y.test')]);
    assert.equal(got.length, want.size);
    assert.equal(new Set(got.map((r) => r.key)).size, want.size);
  });
});
