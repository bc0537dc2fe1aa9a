// A record's memberships leave and join many lists' member sets with one change across their
// partitions (docs/pages.md §Changes across partitions): after merges, deletes and restores of
// contacts that belong to several lists, every list's member set counts exactly its rows, within
// bounds, with every page naive. Tiny buckets make leaves split and merge; one merge runs in a plain
// transaction, where leaves out of bounds are split or merged before COMMIT instead of after it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { write } from '../../src/db/write.ts';
import { rankUpkeepSettled } from '../../src/db/rank/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { LIST_MEMBERS } from '../../src/lists/repository.ts';
import { mergeRecords } from '../../src/merges/service.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { checkEntries, checkPages, useRankSizes } from '../helpers/rank.ts';

eachDialect('ranked member sets changed across lists', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
  test('merges, a delete and a restore of contacts in several lists: every member set exact and within bounds', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const db = t.deps.db.kysely;
    const ok = async (method: 'POST' | 'DELETE', url: string, body?: unknown) => {
      const r = await call(t, s.secret, method, url, body);
      assert.equal(r.statusCode, 200, r.body);
      return r.json();
    };
    const contact = async (name: string) => (await ok('POST', '/v1/contacts', { fields: { $name: { firstName: name, lastName: 'R' } } })).id as string;
    const cs: string[] = [];
    for (let i = 0; i < 24; i++) cs.push(await contact(`c${i}`));
    const ds: string[] = [];
    for (let i = 0; i < 12; i++) ds.push(await contact(`d${i}`));
    const lists: string[] = [];
    for (let i = 0; i < 3; i++)
      lists.push((await ok('POST', '/v1/lists', { fields: { $name: `all ${i}`, $objectType: 'contact' }, relationships: { $contacts: cs } })).id);
    lists.push((await ok('POST', '/v1/lists', { fields: { $name: 'ds', $objectType: 'contact' }, relationships: { $contacts: ds } })).id);
    // Each merge takes a duplicate out of the three lists (the primary is in them) and, for the
    // d's, moves a membership of the fourth list to a primary that was not in it.
    for (let k = 0; k < 10; k++) await ok('POST', '/v1/contacts/merge', { primaryId: cs[2 * k], duplicateId: cs[2 * k + 1] });
    for (let k = 0; k < 9; k++) await ok('POST', '/v1/contacts/merge', { primaryId: cs[2 * k], duplicateId: ds[k] });
    await write(db, (tx) => mergeRecords(operatorCtx(tx, s.workspaceId), RECORD_TYPES.contact, { primaryId: cs[18]!, duplicateId: ds[9]! }));
    await ok('DELETE', `/v1/contacts/${cs[0]}`);
    await ok('DELETE', `/v1/contacts/${cs[20]}`);
    await write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: cs[0]! }), { followUpFailed: (err) => assert.fail(String(err)) });
    await rankUpkeepSettled();
    const totals: number[] = [];
    for (const list of lists) {
      totals.push((await checkEntries(db, LIST_MEMBERS, [list])).total);
      await checkPages(db, LIST_MEMBERS, [list], { limit: 4 });
    }
    // 24 contacts, 10 merged away and one in the trash; the fourth list: 12 d's, 10 of them merged
    // into c0, c2, …, c18 (c0 deleted and back), and c20 was never in it.
    assert.deepEqual(totals, [13, 13, 13, 12]);
  });
});
