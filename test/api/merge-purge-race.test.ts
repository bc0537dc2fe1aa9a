// A note deleted beside a merge of a contact it links to (docs/trash.md §Purge, docs/merge.md
// §Links): on PostgreSQL the delete copies its rows while the merge has moved them but not yet
// committed, so the note's entry holds its link under the duplicate's id, which stands for the
// primary. A purge of the merged duplicate then renames that held row to the primary instead of
// erasing it, and the note's restore links it to the primary. SQLite has one writer at a time: the
// delete runs after the merge's COMMIT and holds the primary's id from the start, the same outcome.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { mergeRecords } from '../../src/merges/service.ts';
import { RECORD_TYPES } from '../../src/records/resource.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

eachDialect('a purge of a merged duplicate beside the trash', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function trash(s: Seeded, sub: 'purge' | 'restore', id: string) {
    const r = await rolodex(ctx(), ['trash', sub, '--workspace', s.workspaceId, id]);
    assert.equal(r.code, 0, r.err);
  }

  test('a note deleted while the merge runs keeps its link to the primary through the purge of the duplicate', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const contact = async (n: string) => (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })).id as string;
    const [primary, duplicate] = [await contact('P'), await contact('D')];
    const note = (await ok(s, 'POST', '/v1/notes', { fields: { $title: 'N' }, relationships: { $contact: [duplicate] } })).id as string;
    let merged!: () => void;
    const ready = new Promise<void>((done) => (merged = done));
    const merging = write(t.deps.db.kysely, async (tx) => {
      await mergeRecords(operatorCtx(tx, s.workspaceId), RECORD_TYPES.contact, { primaryId: primary, duplicateId: duplicate });
      merged();
      if (t.dialect === 'postgres') assert.ok(await someoneWaits(tx), 'the delete waits for the merge');
    });
    await ready;
    const deleting = call(t, s.secret, 'DELETE', `/v1/notes/${note}`);
    await merging;
    assert.equal((await deleting).statusCode, 200);
    await trash(s, 'purge', duplicate);
    await trash(s, 'restore', note);
    assert.deepEqual((await ok(s, 'GET', `/v1/notes/${note}`)).relationships.$contact.values, [primary]);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${primary}`)).relationships.$note.values, [note]);
  });
});
