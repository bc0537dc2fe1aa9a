// A kill during merges leaves each merge whole or absent (docs/merge.md): a real server merges
// pairs of contacts (the duplicate linked to an account and a member of a list) until SIGKILL, at
// seeded points; after each restart, every pair is either untouched or fully merged, never between.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/auth/service.ts';
import { operatorCtx, systemCtx } from '../../src/lib/context.ts';
import { createUser } from '../../src/users/service.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { seeded } from './crash-workload.ts';

const POINTS = Number(process.env.CRASH_POINTS ?? 6);

for (const dialect of testDialects()) {
  describe(`merge crash consistency [${dialect}]`, () => {
    let tdb: TestDb;
    let env: Record<string, string>;
    let secret: string;
    before(async () => {
      tdb = await createTestDb(dialect);
      const db = tdb.db.kysely;
      const ws = await createWorkspace(systemCtx(db), { name: 'Crash merges' });
      const user = await createUser(operatorCtx(db, ws.id), { email: 'merge@example.test', role: 'admin' });
      secret = (await createKey(operatorCtx(db, ws.id), { userId: user.id, scopes: null, expiresInMs: null })).secret;
      env = {
        DATA_DIR: tdb.dataDir,
        RATE_LIMIT_READ: '0',
        RATE_LIMIT_WRITE: '0',
        RATE_LIMIT_SEARCH: '0',
        PUBLIC_BASE_URL: 'http://127.0.0.1',
        ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}),
      };
    });
    after(async () => tdb.drop());

    test(`${POINTS} SIGKILLs during merges leave every merge whole or absent`, async () => {
      const rand = seeded(11 + (dialect === 'postgres' ? 1000 : 0));
      const pairs: Array<{ p: string; d: string; acc: string; list: string; acked: boolean }> = [];
      let server: ServerProcess = await startServerProcess(env);
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${server.baseUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01', 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const json = (await res.json()) as any;
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
        return json;
      };
      for (let point = 0; point < POINTS; point++) {
        // The pairs are made before the window; only merges run when the kill comes.
        const batch: typeof pairs = [];
        for (let i = 0; i < 6; i++) {
          const acc = (await post('/v1/accounts', { fields: { $name: `A${point}` } })).id;
          const p = (await post('/v1/contacts', { fields: { $name: { firstName: 'P' } } })).id;
          const d = (
            await post('/v1/contacts', { fields: { $name: { firstName: 'D' }, $email: [`d${pairs.length}@x.test`] }, relationships: { $account: acc } })
          ).id;
          const list = (await post('/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [d] } })).id;
          const pair = { p, d, acc, list, acked: false };
          pairs.push(pair);
          batch.push(pair);
        }
        const stop = { now: false };
        const loop = Promise.all(
          [0, 1].map(async (c) => {
            for (const pair of batch.filter((_, i) => i % 2 === c)) {
              if (stop.now) return;
              await post('/v1/contacts/merge', { primaryId: pair.p, duplicateId: pair.d });
              pair.acked = true;
            }
          }),
        ).catch((err: Error) => {
          if (!stop.now) throw err;
        });
        await new Promise((r) => setTimeout(r, 20 + Math.floor(rand() * 250)));
        // Until one merge of the run is acknowledged the kill waits for one (a loaded machine may
        // take longer than the window for a merge), so that the run checks whole merges too.
        for (let i = 0; i < 3000 && !pairs.some((x) => x.acked); i++) await new Promise((r) => setTimeout(r, 10));
        stop.now = true;
        server.child.kill('SIGKILL');
        await server.stop('SIGKILL');
        await loop;
        server = await startServerProcess(env);
      }
      await server.stop('SIGTERM');
      const db = tdb.db.kysely;
      let merged = 0;
      for (const { p, d, acc, list, acked } of pairs) {
        const live = await db.selectFrom('records').select('id').where('id', '=', d).executeTakeFirst();
        const trash = await db.selectFrom('trash').select('merged_into').where('id', '=', d).executeTakeFirst();
        const merge = await db.selectFrom('merges').select('status').where('duplicate_id', '=', d).executeTakeFirst();
        const links = await db.selectFrom('entity_relationships').select(['source_id']).where('target_id', '=', acc).execute();
        const members = await db.selectFrom('list_members').select('entity_id').where('list_id', '=', list).execute();
        if (live) {
          assert.equal(acked, false, `acknowledged merge of ${d} lost`);
          assert.deepEqual([trash, merge], [undefined, undefined], `${d} live but partly merged`);
          assert.deepEqual([links.map((l) => l.source_id), members.map((m) => m.entity_id)], [[d], [d]], `${d} live with its links moved`);
        } else {
          merged++;
          assert.deepEqual([trash?.merged_into, merge?.status], [p, 'done'], `${d} gone but not merged`);
          assert.deepEqual([links.map((l) => l.source_id), members.map((m) => m.entity_id)], [[p], [p]], `${d} merged with links left behind`);
        }
      }
      assert.ok(merged > 0, 'some merges completed before a kill');
      console.log(
        `# merge crash [${dialect}]: ${POINTS} SIGKILLs, ${pairs.length} merges started, ${merged} whole, ${pairs.length - merged} absent; half-applied 0`,
      );
    });
  });
}
