// If-Match and If-Unmodified-Since on the server's download address (docs/files.md §Addresses): a
// client that resumes a download with a Range guarded by the validators of the bytes it holds must
// never get a piece of other bytes to splice onto them. A re-import that replaced the bytes makes
// the condition false: 412 `precondition_failed`, GET and HEAD alike, and no bytes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { assertError, md5 } from '../helpers/files.ts';

const dir = mkdtempSync(join(tmpdir(), 'rolodex-preconditions-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const HOUR = 3600_000;

eachDialect('download preconditions', (ctx) => {
  test('If-Match and If-Unmodified-Since naming replaced bytes answer 412, never a range of the new ones', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 6 * HOUR;
    const run = (now: number, bytes: string) => {
      const path = join(dir, `${s.workspaceId}-${now}`);
      writeFileSync(path, bytes);
      const line = { object: 'file', externalId: 'x', source: 'api', filename: 'a.txt', mimeType: 'text/plain', path };
      return runImport(operatorCtx(t.deps.db.kysely, s.workspaceId, { now }), { kinds: importKinds({ blobs: t.deps.blobs }), text: JSON.stringify(line) });
    };
    const id = (await run(t0, 'first bytes')).ids.file?.x as string;
    const url = (await call(t, s.secret, 'GET', `/v1/files/${id}/url`)).json<{ url: string }>().url;
    const path = url.slice(t.config.publicBaseUrl.length);
    const held = await t.app.inject({ method: 'GET', url: path });
    const oldTag = `"${md5('first bytes')}"`;
    const oldDate = String(held.headers['last-modified']);
    assert.equal(held.headers.etag, oldTag);

    await run(t0 + HOUR, 'other bytes');
    const newTag = `"${md5('other bytes')}"`;
    const newDate = new Date(t0 + HOUR).toUTCString();
    const get = (headers: Record<string, string>, method: 'GET' | 'HEAD' = 'GET') =>
      t.app.inject({ method, url: path, headers: { range: 'bytes=6-', ...headers } });

    const unmet: Record<string, string>[] = [
      { 'if-match': oldTag },
      { 'if-match': `W/${newTag}` },
      { 'if-match': `"x", ${oldTag}` },
      { 'if-unmodified-since': oldDate },
    ];
    for (const headers of unmet) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await get(headers, method);
        assert.equal(res.statusCode, 412, `${method} ${JSON.stringify(headers)}: ${res.statusCode} ${res.body}`);
        if (method === 'GET') assertError(res, 412, 'precondition_failed');
        assert.equal(res.headers['content-range'], undefined);
      }
    }
    // Conditions the current bytes meet, or none a server can read, leave the range as asked.
    const met: Record<string, string>[] = [
      { 'if-match': newTag },
      { 'if-match': '*' },
      { 'if-match': `"x", ${newTag}` },
      { 'if-unmodified-since': newDate },
      { 'if-unmodified-since': 'not a date' },
      // If-Match decides alone when both are sent (RFC 9110 §13.2.2).
      { 'if-match': newTag, 'if-unmodified-since': oldDate },
    ];
    for (const headers of met) {
      const res = await get(headers);
      assert.equal(res.statusCode, 206, `${JSON.stringify(headers)}: ${res.statusCode} ${res.body}`);
      assert.equal(res.body, 'bytes');
      assert.equal(res.headers['content-range'], 'bytes 6-10/11');
    }
  });
});
