// What a purge of many entries costs the database (docs/trash.md §Purge): what names the records is
// found for all of them at once, so a purge of 10 entries more sends as many statements, the
// workspace's events and stored answers each read in one pass (one page here), not once an entry.
// Both purges name more ids than the database is asked to search for (`fewTexts`). Held rows of
// merged duplicates are renamed to their primaries in a few statements, whatever their number.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fewTexts } from '../../src/db/portable.ts';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { purge } from '../../src/trash/purge.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

eachDialect('trash purge statements', (ctx) => {
  /** `n` contacts linked to `account`, each created under an idempotency key, then deleted. */
  async function trashed(t: TestApp, s: Seeded, account: string, n: number, tag: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await call(
        t,
        s.secret,
        'POST',
        '/v1/contacts',
        { fields: { $name: { firstName: tag, lastName: `${i}` } }, relationships: { $account: [account] } },
        { 'idempotency-key': `${tag}-${i}` },
      );
      assert.equal(r.statusCode, 200, r.body);
      ids.push(r.json().id);
    }
    for (const id of ids) assert.equal((await call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)).statusCode, 200);
    return ids;
  }

  test('a purge of 10 entries more sends as many statements, and reads the events and stored answers once', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json().id as string;
    const db = t.deps.db.kysely;
    const purged = async (ids: string[]) => statementsOf(() => write(db, (tx) => purge(operatorCtx(tx, s.workspaceId), { ids })));
    // The first warms the caches.
    await purged(await trashed(t, s, account, 1, 'warm'));
    const few = fewTexts(db) + 1;
    const small = await purged(await trashed(t, s, account, few, 'small'));
    const large = await purged(await trashed(t, s, account, few + 10, 'large'));
    for (const [n, { result }] of [
      [few, small],
      [few + 10, large],
    ] as const)
      assert.deepEqual([result.records, result.relationships, result.storedResponses, result.events, result.historyRows], [n, n, n, 2 * n, n]);
    assert.equal(large.statements.length, small.statements.length, JSON.stringify(large.statements, null, 1));
    for (const table of ['events', 'idempotency_keys']) {
      const reads = large.statements.filter((x) => new RegExp(`^select .* from "${table}"`).test(x));
      assert.equal(reads.length, 1, `${table}: ${JSON.stringify(reads)}`);
    }
  });

  test('a purge of 10 merged duplicates more sends as many statements', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const contact = async (name: string) => (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: name } } })).json().id as string;
    /** `n` contacts, each merged into a primary of its own. */
    async function merged(n: number, tag: string): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const [primaryId, duplicateId] = [await contact(`${tag}-p${i}`), await contact(`${tag}-d${i}`)];
        const r = await call(t, s.secret, 'POST', '/v1/contacts/merge', { primaryId, duplicateId });
        assert.equal(r.statusCode, 200, r.body);
        ids.push(duplicateId);
      }
      return ids;
    }
    const db = t.deps.db.kysely;
    const purged = async (ids: string[]) => statementsOf(() => write(db, (tx) => purge(operatorCtx(tx, s.workspaceId), { ids })));
    await purged(await merged(1, 'warm'));
    const few = fewTexts(db) + 1;
    const small = await purged(await merged(few, 'small'));
    const large = await purged(await merged(few + 10, 'large'));
    assert.deepEqual([small.result.records, large.result.records], [few, few + 10]);
    assert.equal(large.statements.length, small.statements.length, JSON.stringify(large.statements, null, 1));
  });
});
