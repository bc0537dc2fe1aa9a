// `GET /v1/objects` lists the custom object types by slug (docs/activities.md), in code point
// order on both databases, whatever the collation of a PostgreSQL database: one whose default is a
// language's (en_US, ICU) would sort `a_c` after `ab`, as it sets punctuation aside, where
// SQLite sorts bytes. The slug column is given such a collation here to stand for that database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';

eachDialect('custom object types in slug order', (ctx) => {
  test('GET /v1/objects orders slugs by code point, not by a language collation', async () => {
    const t = ctx();
    const db = t.deps.db.kysely;
    if (t.dialect === 'postgres') await sql`alter table object_types alter column slug type text collate "en-x-icu"`.execute(db);
    const s = await seedWorkspace(t);
    const c = operatorCtx(db, s.workspaceId);
    for (const slug of ['ab', 'a_c', 'a1', 'b', 'a_']) await defineObjectType(c, { slug, label: slug.toUpperCase() });
    const res = await call(t, s.secret, 'GET', '/v1/objects');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().data.map((o: { objectType: string }) => o.objectType),
      ['a1', 'a_', 'a_c', 'ab', 'b'],
    );
  });
});
