// GET /v1/messages through the ranked index (docs/pages.md §Parts) against a full scan done here,
// on both databases, for every kind of caller (a workspace key; users who are members of several
// private channels, of one, of none): every page at every offset and totalCount, after imports,
// re-imports that move messages between channels and in time, visibility changes in every
// direction, membership changes and a bulk import. Tiny buckets make leaves split and merge.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changeMembers, setVisibility } from '../../src/channels/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { MESSAGES } from '../../src/messages/repository.ts';
import { call, eachDialect, type TestApp } from '../helpers/app.ts';
import { importObjects, message, seedPeople, visibleByScan } from '../helpers/messages.ts';
import { checkEntries, checkParts, useRankSizes } from '../helpers/rank.ts';
import { write } from '../../src/db/write.ts';

const CHANNELS = [
  { externalId: 'pub', visibility: 'public', members: ['u-alice'] },
  { externalId: 'res', visibility: 'restricted', members: ['u-alice'] },
  { externalId: 'pri-ab', visibility: 'private', members: ['u-alice', 'u-bob'] },
  { externalId: 'pri-b', visibility: 'private', members: ['u-bob'] },
  { externalId: 'pri-none', visibility: 'private', members: [] },
  { externalId: 'pri-a', visibility: 'private', members: ['u-alice'] },
];

// 12 instants: many messages share one, so every page boundary cuts through ties.
const at = (i: number) => new Date(Date.UTC(2026, 2, 1, 0, i % 12)).toISOString();

eachDialect('messages pages', (ctx) => {
  useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
  test('every caller kind: every page and totalCount equal a full scan, through imports, moves and visibility changes', async () => {
    const t = ctx();
    const { workspaceId, users, callers } = await seedPeople(t);
    const db = t.deps.db.kysely;
    const ops = operatorCtx(db, workspaceId);
    const userOf = (name: string) => (name === 'workspace' ? null : (users[name] as string));

    const check = async (when: string) => {
      const shape = await checkEntries(db, MESSAGES, [workspaceId]);
      await checkParts(db, MESSAGES, [workspaceId]);
      for (const caller of callers) {
        const want = await visibleByScan(db, workspaceId, userOf(caller.name));
        for (const limit of [7, 25]) {
          // Every offset while there are few, then a spread of them (each page spans several leaves).
          const step = Math.max(1, Math.floor(want.length / 50));
          const offsets =
            limit === 7
              ? [...Array.from({ length: Math.ceil((want.length + 1) / step) }, (_, i) => i * step), want.length, want.length + 4]
              : [0, 13, want.length - 1];
          for (const offset of offsets.filter((o) => o >= 0)) {
            const res = await call(t, caller.secret, 'GET', `/v1/messages?limit=${limit}&offset=${offset}`);
            assert.equal(res.statusCode, 200, res.body);
            const body = res.json();
            const where = `${when}: ${caller.name} limit ${limit} offset ${offset}`;
            assert.equal(body.totalCount, want.length, `${where}: totalCount`);
            assert.deepEqual(
              body.data.map((m: { id: string }) => m.id),
              want.slice(offset, offset + limit),
              where,
            );
          }
        }
      }
      return shape;
    };

    const channels = CHANNELS.map((c) => ({ object: 'channel', provider: 'slack', name: c.externalId, ...c }));
    const first = Array.from({ length: 90 }, (_, i) => message(`m${i}`, (CHANNELS[i % CHANNELS.length] as { externalId: string }).externalId, at(i), `t${i}`));
    await importObjects(t, workspaceId, [...channels, ...first]);
    const shape = await check('first import');
    assert.ok((shape.entries[0] ?? 0) > 8 && (shape.entries[1] ?? 0) > 1, `leaves and upper entries: ${shape.entries.join(',')}`);

    // Re-imports: messages change channel (into and out of private ones) and time; new ones arrive.
    const moved = Array.from({ length: 40 }, (_, i) =>
      message(`m${i * 2}`, (CHANNELS[(i * 5 + 1) % CHANNELS.length] as { externalId: string }).externalId, at(i * 7), `moved ${i}`),
    );
    const more = Array.from({ length: 30 }, (_, i) =>
      message(`n${i}`, (CHANNELS[(i + 2) % CHANNELS.length] as { externalId: string }).externalId, at(i + 3), `n${i}`),
    );
    await importObjects(t, workspaceId, [...moved, ...more]);
    await check('re-import');

    // Every direction of visibility change, each in its own transaction as the CLI does it.
    for (const [channel, visibility] of [
      ['pri-ab', 'public'],
      ['pub', 'private'],
      ['res', 'private'],
      ['pri-none', 'restricted'],
      ['pri-b', 'private'],
    ] as const)
      await write(db, (tx) => setVisibility({ ...ops, db: tx }, { channel, visibility }));
    await check('visibility changes');

    // Memberships do not touch the index: they change which parts a caller reads.
    await changeMembers(ops, { channel: 'pub', add: ['u-bob', 'u-carol'], remove: ['u-alice'] });
    await changeMembers(ops, { channel: 'pri-a', add: ['u-carol'] });
    await check('membership changes');

    // A bulk import, larger than what is there: the scope is counted again from its rows.
    const bulk = Array.from({ length: 260 }, (_, i) =>
      message(`b${i}`, (CHANNELS[(i * 7) % CHANNELS.length] as { externalId: string }).externalId, at(i % 5), `b${i}`),
    );
    await importObjects(t, workspaceId, bulk);
    await check('bulk import');
  });

  test('another workspace and its private channels change nothing here', async () => {
    const t: TestApp = ctx();
    const a = await seedPeople(t);
    const b = await seedPeople(t);
    await importObjects(t, b.workspaceId, [
      { object: 'channel', externalId: 'x', provider: 'slack', name: 'x', visibility: 'private', members: ['u-alice'] },
      ...Array.from({ length: 20 }, (_, i) => message(`x${i}`, 'x', at(i), 'x')),
    ]);
    for (const caller of a.callers) {
      const res = (await call(t, caller.secret, 'GET', '/v1/messages')).json();
      assert.deepEqual(res, { data: [], object: 'list', totalCount: 0 }, caller.name);
    }
  });
});
