// `rolodex import` loads only what an import uses, in each of its threads (docs/import.md §Memory):
// neither the server's transport and metrics nor TypeBox on the main thread, and on SQLite a
// writer thread that loads node:sqlite and its own few files, not Kysely.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { systemCtx } from '../../src/lib/context.ts';
import { createWorkspace } from '../../src/workspaces/service.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Packages no import needs: the server's transport, its metrics, and TypeBox's schemas. */
const SERVER_ONLY = ['fastify', '@fastify/', '@sinclair/typebox', 'ajv', 'prom-client', '@opentelemetry/', 'pino'];

/**
 * Files of those packages that an import shares with the server: ajv-formats' table of formats,
 * one file without dependencies, with which the meeting kind checks addresses and URLs as a
 * request's schema does (src/lib/formats.ts). The plugin that adds it to ajv stays out.
 */
const SHARED = ['ajv-formats/dist/formats.js'];

/** The package of a module's URL (a shared file: its path), or its path under src/, or the URL as it is (node: builtins). */
function owner(url: string): string {
  const shared = SHARED.find((f) => url.endsWith(`/node_modules/${f}`));
  if (shared) return shared;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (m) return m[1]!;
  const src = /\/src\/(.*)$/.exec(url);
  return src ? `src/${src[1]}` : url;
}

for (const dialect of testDialects()) {
  describe(`import's modules [${dialect}]`, () => {
    let tdb: TestDb;
    let dir: string;
    let workspaceId: string;
    before(async () => {
      tdb = await createTestDb(dialect);
      workspaceId = (await createWorkspace(systemCtx(tdb.db.kysely), { name: 'Modules' })).id;
      dir = mkdtempSync(join(tmpdir(), 'rolodex-modules-'));
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await tdb.drop();
    });

    test('each thread of rolodex import loads only what the import uses', () => {
      // Loaded by every start of Node and every thread: writes each module it loads, with its thread.
      const log = join(dir, 'modules.log');
      const probe = join(dir, 'probe.mjs');
      writeFileSync(
        probe,
        `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
import { isMainThread, threadId } from 'node:worker_threads';
const thread = isMainThread ? 'main' : 'thread ' + threadId;
registerHooks({ load(url, context, next) { appendFileSync(${JSON.stringify(log)}, thread + ' ' + process.pid + ' ' + url + '\\n'); return next(url, context); } });
`,
      );
      const file = join(dir, 'contacts.ndjson');
      writeFileSync(
        file,
        Array.from({ length: 20 }, (_, i) =>
          JSON.stringify({
            object: 'contact',
            externalId: `c${i}`,
            fields: { $name: { value: { firstName: 'Ann', lastName: `Lee${i}` }, valueType: 'FULL_NAME' } },
          }),
        ).join('\n'),
      );
      const env = { ...process.env, DATA_DIR: tdb.dataDir, ...(tdb.databaseUrl ? { DATABASE_URL: tdb.databaseUrl } : {}), NODE_OPTIONS: `--import=${probe}` };
      const r = spawnSync(process.execPath, [MAIN, 'import', '--workspace', workspaceId, file, '--json'], { env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).counts.contact, 20);

      const loads = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '));
      // The process that ran the import: the last one started (the command starts Node again, src/cli/main.ts).
      const pid = loads.at(-1)!.at(-2)!;
      const byThread = new Map<string, Set<string>>();
      for (const l of loads) {
        if (l.at(-2) !== pid) continue;
        const thread = l.slice(0, -2).join(' ');
        if (!byThread.has(thread)) byThread.set(thread, new Set());
        byThread.get(thread)!.add(owner(l.at(-1)!));
      }
      const main = [...byThread.get('main')!];
      assert.ok(main.includes('kysely'), 'the probe saw the main thread load its modules');
      assert.deepEqual(
        main.filter((o) => !SHARED.includes(o) && SERVER_ONLY.some((p) => o === p || o.startsWith(p))),
        [],
        'the main thread loads none of the server-only packages',
      );
      assert.deepEqual(
        main.filter((o) => /^src\/(http|mcp|metrics|rate-limit|jobs)\//.test(o) || /^src\/[a-z-]+\/routes\.ts$/.test(o)),
        [],
        'the main thread loads no transport, metrics, rate limits or jobs',
      );
      const threads = [...byThread.keys()].filter((t) => t !== 'main');
      if (dialect === 'sqlite') {
        assert.equal(threads.length, 1, `threads: ${threads.join(', ')}`);
        const writer = [...byThread.get(threads[0]!)!].sort();
        assert.deepEqual(
          writer.filter((o) => !o.startsWith('node:')),
          ['src/db/sqlite/cached.ts', 'src/db/sqlite/pin.ts', 'src/db/sqlite/settings.ts', 'src/db/sqlite/writer-thread.ts', 'src/lib/gc.ts'],
          'the writer thread loads its connection and nothing of Kysely',
        );
      } else {
        assert.ok(main.includes('postgres'), 'the main thread loads the PostgreSQL driver');
        assert.deepEqual(threads, [], 'no thread on PostgreSQL');
      }
    });
  });
}
