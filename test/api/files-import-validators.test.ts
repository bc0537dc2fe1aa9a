// The validators of a file's download across re-imports (docs/files.md §Addresses): a re-import
// that brings other bytes moves Last-Modified to its own time and the ETag to the new bytes' MD5,
// GET and HEAD alike, so a client holding the earlier bytes sees that they changed; one that brings
// the same bytes, under another filename or none changed, leaves both where they were. The file's
// completedAt stays the time it first completed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { md5 } from '../helpers/files.ts';

const dir = mkdtempSync(join(tmpdir(), 'rolodex-import-validators-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const HOUR = 3600_000;

eachDialect('download validators across re-imports', (ctx) => {
  test('other bytes move Last-Modified and the ETag; the same bytes leave them', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    // Whole seconds, hours apart: Last-Modified is an HTTP date, to the second.
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 6 * HOUR;
    const run = (now: number, filename: string, bytes: string) => {
      const path = join(dir, `${s.workspaceId}-${now}`);
      writeFileSync(path, bytes);
      const line = { object: 'file', externalId: 'x', source: 'api', filename, mimeType: 'text/plain', path };
      return runImport(operatorCtx(t.deps.db.kysely, s.workspaceId, { now }), { kinds: importKinds({ blobs: t.deps.blobs }), text: JSON.stringify(line) });
    };
    const id = (await run(t0, 'a.txt', 'first bytes')).ids.file?.x as string;
    const validators = async () => {
      const url = (await call(t, s.secret, 'GET', `/v1/files/${id}/url`)).json<{ url: string }>().url;
      const path = url.slice(t.config.publicBaseUrl.length);
      const get = await t.app.inject({ method: 'GET', url: path });
      const head = await t.app.inject({ method: 'HEAD', url: path });
      assert.equal(get.statusCode, 200);
      assert.equal(head.headers['last-modified'], get.headers['last-modified']);
      assert.equal(head.headers.etag, get.headers.etag);
      return { lastModified: get.headers['last-modified'], etag: get.headers.etag, body: get.body, disposition: get.headers['content-disposition'] };
    };
    const first = await validators();
    assert.equal(first.lastModified, new Date(t0).toUTCString());
    assert.equal(first.etag, `"${md5('first bytes')}"`);

    // The same bytes under another filename: the line writes the filename, not the validators.
    await run(t0 + HOUR, 'b.txt', 'first bytes');
    const renamed = await validators();
    assert.match(String(renamed.disposition), /b\.txt/);
    assert.equal(renamed.lastModified, first.lastModified);
    assert.equal(renamed.etag, first.etag);

    await run(t0 + 2 * HOUR, 'b.txt', 'other bytes');
    const replaced = await validators();
    assert.equal(replaced.body, 'other bytes');
    assert.equal(replaced.lastModified, new Date(t0 + 2 * HOUR).toUTCString());
    assert.equal(replaced.etag, `"${md5('other bytes')}"`);

    // Those bytes again, with a new filename or as they are: nothing moves.
    await run(t0 + 3 * HOUR, 'c.txt', 'other bytes');
    await run(t0 + 4 * HOUR, 'c.txt', 'other bytes');
    const again = await validators();
    assert.equal(again.lastModified, replaced.lastModified);
    assert.equal(again.etag, replaced.etag);

    const file = (await call(t, s.secret, 'GET', `/v1/files/${id}`)).json<{ completedAt: string }>();
    assert.equal(file.completedAt, new Date(t0).toISOString());
  });
});
