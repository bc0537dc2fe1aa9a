// `rolodex import` while a server uses the same database (docs/import.md §Sharing the database):
// the server's writes to another workspace keep succeeding, without waiting for the import's
// whole transaction, and readers of the imported workspace see all of an atomic import or none.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { CLI } from '../helpers/process.ts';
import { LOG_BOUND } from '../../src/db/log-bound.ts';

function contacts(n: number): string {
  const lines = [JSON.stringify({ object: 'account', externalId: 'a0', fields: { $name: { value: 'Acme', valueType: 'TEXT' } } })];
  for (let i = 0; i < n; i++) {
    lines.push(
      JSON.stringify({
        object: 'contact',
        externalId: `c${i}`,
        fields: {
          $name: { value: { firstName: 'Ann', lastName: `Lee${i}` }, valueType: 'FULL_NAME' },
          $email: { value: [`ann.${i}@acme.test`], valueType: 'EMAIL' },
        },
        relationships: { $account: { values: ['a0'] } },
      }),
    );
  }
  return lines.join('\n');
}

eachDialect('rolodex import sharing the database with a server', (ctx) => {
  test("the server's writes to another workspace succeed during an import, and none waits for the whole import", async () => {
    const t = ctx();
    // Enough contacts that one transaction for all of them holds SQLite's writers for seconds (on
    // PostgreSQL, where a transaction holds no other workspace's writers, fewer suffice).
    const N = t.dialect === 'sqlite' ? 30_000 : 5000;
    const target = await seedWorkspace(t);
    const other = await seedWorkspace(t);
    const file = join(t.tdb.dataDir, 'sharing.ndjson');
    writeFileSync(file, contacts(N));
    const env = { ...process.env, DATA_DIR: t.tdb.dataDir, ...(t.tdb.databaseUrl ? { DATABASE_URL: t.tdb.databaseUrl } : {}) };
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'import', '--workspace', target.workspaceId, file, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let running = true;
    void exited.then(() => (running = false));

    const waits: number[] = [];
    const seen = new Set<number>();
    let i = 0;
    // SQLite's write-ahead log: the server's writes and reads leave SQLite no moment to start it
    // again by itself, so the import does once it is past its bound (docs/import.md §Sharing the database).
    const wal = join(t.tdb.dataDir, 'rolodex.db-wal');
    let longest = 0;
    const sampling = setInterval(() => (longest = Math.max(longest, statSync(wal, { throwIfNoEntry: false })?.size ?? 0)), 20);
    while (running) {
      const t0 = performance.now();
      const r = await call(t, other.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Bo', lastName: `W${i++}` } } });
      waits.push(performance.now() - t0);
      assert.equal(r.statusCode, 200, r.body);
      const page = await call(t, target.secret, 'GET', '/v1/contacts?limit=1');
      assert.equal(page.statusCode, 200, page.body);
      seen.add(page.json().totalCount as number);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    clearInterval(sampling);
    const code = await exited;
    const seconds = (performance.now() - started) / 1000;
    assert.equal(code, 0, err);
    const summary = JSON.parse(out) as { counts: Record<string, number>; commit: string; phases: Record<string, number> };
    assert.deepEqual(summary.counts, { account: 1, contact: N });
    assert.ok(waits.length >= 5, `only ${waits.length} writes during a ${seconds.toFixed(1)} s import`);
    // One transaction for the whole import holds SQLite's writers for all of its writing; a
    // chunk's is short. Measured against the import's own writing, the bound holds on a busy
    // machine too, where both grow; bench/import-sharing.ts measures the p99.
    const writing = 1000 * ((summary.phases.write ?? 0) + (summary.phases.listings ?? 0) + (summary.phases.commit ?? 0));
    const slowest = Math.max(...waits);
    assert.ok(slowest < writing / 2, `a write waited ${slowest.toFixed(0)} ms of the import's ${writing.toFixed(0)} ms of writing`);
    if (summary.commit === 'atomic')
      assert.deepEqual(
        [...seen].filter((n) => n !== 0 && n !== N),
        [],
        'an atomic import is seen whole or not at all',
      );
    const after = await call(t, target.secret, 'GET', '/v1/contacts?limit=1');
    assert.equal(after.json().totalCount, N);
    // Past its bound the log is started again before the next chunk, so it exceeds it by what a
    // chunk and the server's writes meanwhile add.
    if (t.dialect === 'sqlite') assert.ok(longest <= 2 * LOG_BOUND, `the log reached ${(longest / 2 ** 20).toFixed(0)} MiB`);
  });
});
