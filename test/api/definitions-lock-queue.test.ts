// An API merge while `rolodex definition unarchive` waits for the definitions lock, held shared by
// a long transaction (an atomic import's), on PostgreSQL (docs/records.md §Definitions): the
// unarchive waits for the holder, and the merge, which takes the lock shared too, does not wait
// behind the unarchive. (SQLite has one writer: a merge never overlaps a definition write.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { write } from '../../src/db/index.ts';
import { holdDefinitions } from '../../src/definitions/repository.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { setArchived } from '../../src/records/service.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { asksFor } from '../helpers/pg-locks.ts';

/** How long the merge is given while the holder stays open: far below the holder's minutes. */
const MERGE_WITHIN_MS = 3000;

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`a merge while an unarchive waits for a shared holder of the definitions [${dialect}]`, () => {
    test('the merge completes while the holder is open; the unarchive once it ended', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const ws = s.workspaceId;
        await addField(operatorCtx(t.deps.db.kysely, ws), { objectType: 'account', key: 'code', label: 'code', valueType: 'TEXT', unique: true });
        const ok = async (name: string, fields: Record<string, unknown>) => {
          const res = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: name, ...fields } });
          assert.equal(res.statusCode, 200, res.body);
          return res.json<{ id: string }>().id;
        };
        const p = await ok('P', {});
        const d = await ok('D', { code: 'd-1' });
        await write(t.deps.db.kysely, (tx) => setArchived({ ...operatorCtx(tx, ws), db: tx }, { objectType: 'account', key: 'code', archived: true }));

        let unarchive: ReturnType<typeof rolodex> | undefined;
        let merge: ReturnType<typeof call> | undefined;
        let unarchived = false;
        const seen: { asked?: boolean; merged?: boolean; unarchivedBefore?: boolean } = {};
        try {
          await write(t.deps.db.kysely, async (tx) => {
            await holdDefinitions(tx, ws);
            unarchive = rolodex(t, ['definition', 'unarchive', '--workspace', ws, '--type', 'account', '--key', 'code']);
            void unarchive.finally(() => (unarchived = true));
            seen.asked = await asksFor(tx, `definitions/${ws}`);
            if (!seen.asked) return;
            merge = call(t, s.secret, 'POST', '/v1/accounts/merge', { primaryId: p, duplicateId: d });
            const timer = new AbortController();
            const late = wait(MERGE_WITHIN_MS, 'waiting', { signal: timer.signal }).catch(() => 'stopped');
            const first = await Promise.race([merge.then(() => 'merged'), late]);
            timer.abort();
            seen.merged = first === 'merged';
            seen.unarchivedBefore = unarchived;
          });
        } finally {
          await Promise.allSettled([unarchive, merge]);
        }
        assert.deepEqual(seen, { asked: true, merged: true, unarchivedBefore: false });
        const merged = await merge!;
        assert.equal(merged.statusCode, 200, merged.body);
        const done = await unarchive!;
        assert.equal(done.code, 0, done.err);
        // The unarchive, after the merge, found the primary holding the value it took.
        const found = (await call(t, s.secret, 'GET', '/v1/accounts?code=d-1')).json().data as { id: string }[];
        assert.deepEqual(
          found.map((r) => r.id),
          [p],
        );
      } finally {
        await t.close();
      }
    });
  });
