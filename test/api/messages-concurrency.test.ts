// Message pages under concurrent writers (docs/pages.md), on both databases: two app instances on
// one database (two SQLite connections to one file; two PostgreSQL pools) while imports add and
// move messages, channels change visibility and members, each through either instance's database,
// and callers of every kind read pages through both. Every page read meanwhile agrees with its own
// totalCount; afterwards every count and part is exact and every page equals a full scan.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { createDiskBlobStore } from '../../src/blobs/disk.ts';
import { changeMembers, setVisibility } from '../../src/channels/service.ts';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { openDb } from '../../src/db/database.ts';
import type { Db } from '../../src/db/types.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { MESSAGES } from '../../src/messages/repository.ts';
import { buildTestApp, headers, type TestApp } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { message, seedPeople, visibleByScan } from '../helpers/messages.ts';
import { checkEntries, checkParts, useRankSizes } from '../helpers/rank.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';
import { write } from '../../src/db/write.ts';

function rng(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

const CHANNELS = ['c0', 'c1', 'c2', 'c3', 'c4'];
const VISIBILITIES = ['public', 'restricted', 'private'] as const;
const at = (i: number) => new Date(Date.UTC(2026, 2, 1, 0, i % 9)).toISOString();

for (const dialect of testDialects()) {
  describe(`message pages under concurrent writers [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let t: TestApp;
    let db2: Db;
    let app2: FastifyInstance;
    before(async () => {
      t = await buildTestApp(dialect);
      db2 = t.tdb.sqliteFile
        ? openDb({ dataDir: t.tdb.dataDir, sqliteFile: t.tdb.sqliteFile })
        : openDb({ dataDir: t.tdb.dataDir, databaseUrl: TEST_DATABASE_URL, schema: t.tdb.schema });
      const { metrics: _own, ...shared } = t.deps;
      app2 = await buildApp(t.config, { ...shared, db: db2, auth: new Authenticator(db2), blobs: createDiskBlobStore(join(t.tdb.dataDir, 'blobs')) });
      await app2.ready();
    });
    after(async () => {
      await app2?.close();
      await db2?.close();
      await t?.close();
    });

    test('imports, moves, visibility and membership changes at once: reads consistent, counts exact, pages equal a full scan', async () => {
      const { workspaceId, users, callers } = await seedPeople(t);
      // On SQLite the writers share one handle: two handles of one process would each wait for the
      // other's lock synchronously (the busy timeout blocks the thread that holds the other lock).
      // Processes of their own, as `serve --workers` runs them, wait for each other normally.
      const dbs = dialect === 'sqlite' ? [t.deps.db.kysely, t.deps.db.kysely] : [t.deps.db.kysely, db2.kysely];
      const apps = [t.app, app2];
      const importOn = (i: number, objects: Array<Record<string, unknown>>) =>
        runImport(operatorCtx(dbs[i % 2] as Db['kysely'], workspaceId), { kinds: importKinds(), text: objects.map((o) => JSON.stringify(o)).join('\n') });
      await importOn(0, [
        ...CHANNELS.map((c, i) => ({
          object: 'channel',
          externalId: c,
          provider: 'slack',
          name: c,
          visibility: VISIBILITIES[i % 3],
          members: i % 2 ? ['u-alice'] : ['u-bob'],
        })),
        ...Array.from({ length: 60 }, (_, i) => message(`m${i}`, CHANNELS[i % CHANNELS.length] as string, at(i), `t${i}`)),
      ]);

      // Each instance notes a key's use at most once a minute, a write of its own: noted here, before
      // the writers start, so that on SQLite no instance waits for the write lock inside a read.
      for (const app of apps) for (const c of callers) await app.inject({ method: 'GET', url: '/v1/messages?limit=1', headers: headers(c.secret) });
      const random = rng(11);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
      const inconsistent: string[] = [];
      const work: Promise<unknown>[] = [];
      let next = 60;
      for (let i = 0; i < 24; i++) {
        // New messages and re-imported ones (another channel, another time).
        const fresh = Array.from({ length: 1 + Math.floor(random() * 12) }, () => {
          const n = next++;
          return message(`m${n}`, pick(CHANNELS), at(n), `t${n}`);
        });
        const moved = Array.from({ length: Math.floor(random() * 8) }, () => Math.floor(random() * 60)).map((n) =>
          message(`m${n}`, pick(CHANNELS), at(n + i), `moved ${i}`),
        );
        const unique = [...new Map([...fresh, ...moved].map((m) => [m.externalId, m])).values()];
        work.push(importOn(i, unique));
        if (i % 3 === 0) {
          const channel = pick(CHANNELS);
          const visibility = pick(VISIBILITIES);
          work.push(write(dbs[(i + 1) % 2] as Db['kysely'], (tx) => setVisibility({ ...operatorCtx(tx, workspaceId) }, { channel, visibility })));
        }
        if (i % 4 === 1)
          work.push(changeMembers(operatorCtx(dbs[i % 2] as Db['kysely'], workspaceId), { channel: pick(CHANNELS), add: ['u-carol'], remove: ['u-bob'] }));
        for (const caller of callers) {
          const limit = 1 + Math.floor(random() * 25);
          const offset = Math.floor(random() * 80);
          const app = apps[(i + callers.indexOf(caller)) % 2] as FastifyInstance;
          work.push(
            app.inject({ method: 'GET', url: `/v1/messages?limit=${limit}&offset=${offset}`, headers: headers(caller.secret) }).then((r) => {
              assert.equal(r.statusCode, 200, r.body);
              const { data, totalCount } = r.json();
              if (data.length !== Math.max(0, Math.min(limit, totalCount - offset)))
                inconsistent.push(`${caller.name} offset ${offset}: ${data.length} items of ${totalCount}`);
            }),
          );
        }
      }
      await Promise.all(work);
      assert.deepEqual(inconsistent, []);

      const db = t.deps.db.kysely;
      const shape = await checkEntries(db, MESSAGES, [workspaceId]);
      assert.ok((shape.entries[0] ?? 0) > 5 && (shape.entries[1] ?? 0) > 1, `leaves and upper entries: ${shape.entries.join(',')}`);
      await checkParts(db, MESSAGES, [workspaceId]);
      for (const caller of callers) {
        const want = await visibleByScan(db, workspaceId, caller.name === 'workspace' ? null : (users[caller.name] as string));
        for (const [i, app] of apps.entries()) {
          for (const offset of [0, 9, 31, want.length - 3, want.length]) {
            const r = (await app.inject({ method: 'GET', url: `/v1/messages?offset=${Math.max(0, offset)}`, headers: headers(caller.secret) })).json();
            assert.equal(r.totalCount, want.length, `${caller.name} instance ${i}: totalCount`);
            assert.deepEqual(
              r.data.map((m: { id: string }) => m.id),
              want.slice(Math.max(0, offset), Math.max(0, offset) + 25),
              `${caller.name} instance ${i} offset ${offset}`,
            );
          }
        }
      }
    });
  });
}
