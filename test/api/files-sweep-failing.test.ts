// The sweeper's deletes of garbage blobs (docs/files.md §Sweeper) when the blob store refuses some:
// the others are still deleted, each refused one is logged once while it keeps failing, and its
// garbage row stays for the next sweep, which deletes it once the store takes the delete.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import type { Logger } from 'pino';
import type { BlobStore } from '../../src/blobs/blob-store.ts';
import { addGarbage } from '../../src/files/repository.ts';
import { filesEnv } from '../../src/files/service.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { eachDialect, seedWorkspace } from '../helpers/app.ts';

/** `blobs`, whose delete of a key in `refused` fails as a directory the process may not write. */
function refusingDeletes(blobs: BlobStore, refused: Set<string>): BlobStore {
  return refusing(blobs, refused, (key) => Object.assign(new Error(`EACCES: permission denied, unlink '${key}'`), { code: 'EACCES' }));
}

/** `blobs`, whose delete of a key in `refused` rejects with `error(key)`. */
function refusing(blobs: BlobStore, refused: Set<string>, error: (key: string) => unknown): BlobStore {
  return Object.create(blobs, {
    delete: {
      value: async (key: string) => {
        if (refused.has(key)) throw error(key);
        return blobs.delete(key);
      },
    },
  }) as BlobStore;
}

eachDialect('sweeper, blob deletes refused', (ctx) => {
  test('a refused delete keeps neither the other orphans nor itself for ever; it is logged once', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const db = t.deps.db.kysely;
    // More refused than one batch of the sweep (200), all due before the others.
    const bad = Array.from({ length: 201 }, (_, i) => `${s.workspaceId}/bad-${String(i).padStart(3, '0')}`);
    const good = [`${s.workspaceId}/good-1`, `${s.workspaceId}/good-2`];
    for (const key of [...bad, ...good]) await t.deps.blobs.put(key, Readable.from([Buffer.from('orphan')]), { maxBytes: 100 });
    for (const key of bad) await addGarbage(db, key, '2000-01-01T00:00:00.000Z');
    for (const key of good) await addGarbage(db, key, '2000-01-02T00:00:00.000Z');

    const refused = new Set(bad);
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const log = { warn: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }) } as unknown as Logger;
    const failing = new Set<string>();
    const sweep = () => sweepOnce({ db, now: Date.now(), files: filesEnv(t.config, refusingDeletes(t.deps.blobs, refused)) }, { log, failing });
    const garbage = async () =>
      (
        await db
          .selectFrom('blob_garbage')
          .select('blob_key')
          .where('blob_key', 'in', [...bad, ...good])
          .execute()
      )
        .map((r) => r.blob_key)
        .sort();

    const first = await sweep();
    assert.equal(first.blobsFailed, bad.length);
    for (const key of good) assert.equal(await t.deps.blobs.stat(key), null, `${key} is deleted`);
    assert.deepEqual(await garbage(), bad, 'the refused stay queued');
    assert.deepEqual(lines.map((l) => l.obj.blobKey).sort(), bad, 'one line for each refused blob');
    assert.deepEqual(lines[0], {
      obj: { blobKey: bad[0], code: 'EACCES', reason: `EACCES: permission denied, unlink '${bad[0]}'` },
      msg: 'garbage blob not deleted; the next sweep tries again',
    });

    // Refused again: tried again, not logged again.
    const second = await sweep();
    assert.equal(second.blobsFailed, bad.length);
    assert.equal(lines.length, bad.length);
    for (const key of bad) assert.notEqual(await t.deps.blobs.stat(key), null);

    // The store takes the deletes again: the next sweep deletes them; a later refusal is news.
    refused.clear();
    const third = await sweep();
    assert.equal(third.blobsFailed, 0);
    assert.ok(third.blobsDeleted >= bad.length);
    for (const key of bad) assert.equal(await t.deps.blobs.stat(key), null);
    assert.deepEqual(await garbage(), []);
    assert.deepEqual([...failing], []);
  });

  test('an S3 refusal is logged with its name as its code; a rejection with nothing is still one line', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const db = t.deps.db.kysely;
    const [denied, empty, good] = ['denied', 'empty', 'good'].map((k) => `${s.workspaceId}/${k}`) as [string, string, string];
    for (const key of [denied, empty, good]) {
      await t.deps.blobs.put(key, Readable.from([Buffer.from('orphan')]), { maxBytes: 100 });
      await addGarbage(db, key, '2000-01-01T00:00:00.000Z');
    }
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const log = { warn: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }) } as unknown as Logger;
    // The S3 client's errors carry their code as their name, and have no `code`.
    const s3 = Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
    const blobs = refusing(t.deps.blobs, new Set([denied, empty]), (key) => (key === denied ? s3 : undefined));
    const result = await sweepOnce({ db, now: Date.now(), files: filesEnv(t.config, blobs) }, { log, failing: new Set() });
    assert.equal(result.blobsFailed, 2);
    assert.equal(await t.deps.blobs.stat(good), null, 'the others are still deleted');
    assert.deepEqual(
      lines.map((l) => l.obj).sort((a, b) => String(a.blobKey).localeCompare(String(b.blobKey))),
      [
        { blobKey: denied, code: 'AccessDenied', reason: 'Access Denied' },
        { blobKey: empty, reason: 'undefined' },
      ],
    );
  });
});
